// Package authtest holds tests of package ray against a real local Ray
// cluster started with token authentication on. They live apart from
// package ray's own tests so that the two clusters never run at once
// inside one test binary.
package authtest
