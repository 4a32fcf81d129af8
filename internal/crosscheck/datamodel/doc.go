// Package datamodel holds the tests that run iter_jax_batches cases on
// real Ray Data and JAX (the project virtualenv, CPU JAX) and compare
// every host's batch shapes and outcome with data's Go model of Ray's
// sharding and batching. It needs Python and Ray, so it lives outside the
// unit packages, which need nothing but Go.
//
// TestCrossCheckRealRay holds hand-picked cases of Ray Train's split and
// of batch synchronisation over two JAX processes. TestCrossCheckGrid
// generates its cases: with a fixed seed, by kind (local shuffle buffers
// around the batch size, datasets read whole by every worker and a few
// split ones, block counts from Ray's choice to 40, 1 to 8 JAX devices,
// the default batch size, from_items with per-column paddings); a sweep
// of every local shuffle buffer from 1 to 2×batch under every ragged
// policy over eight datasets (batches of 6, 9 and 16, odd row counts,
// block counts that do not divide them, blocks of a few rows, Ray's
// choice), each read once and iterated from a materialized copy; and the
// case of a buffer a quarter of the batch over ten blocks of 10 rows, read
// whole and split over one worker. It checks Predict (equal when exact,
// inside the bounds when not) and the batcher model over the blocks Ray's
// batcher actually received.
//
// Both tests send their cases to one testdata/crosscheck_ray.py process,
// which the first of them starts and TestMain ends: one Python process
// and one local Ray instance (ray.init) for the package.
package datamodel
