// Package datamodel holds the test that runs a grid of iter_jax_batches
// cases on real Ray Data and JAX (the project virtualenv, CPU JAX) and
// compares every host's batch shapes and outcome with data's Go model of
// Ray's sharding and batching. It needs Python and Ray, so it lives
// outside the unit packages, which need nothing but Go.
package datamodel
