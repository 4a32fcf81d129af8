// Package tpurules holds the test that asks the installed Ray (from the
// project virtualenv) the same TPU questions the tpu catalog answers
// (chips per host, pod types, valid topologies, the number of workers)
// and fails where the two disagree, except for the divergences the test
// lists with their reason. It needs Python and Ray, so it lives outside
// the unit packages (make unit), which need nothing but Go.
package tpurules
