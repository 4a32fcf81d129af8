// Package train mirrors Ray Train's JaxTrainer (ray.train.v2.jax) for TPUs.
//
// A [JaxTrainer] names a Python train loop by import path and says how to
// scale it: UseTPU with an accelerator and a topology gives one worker per
// TPU host, and NumSlices (or NumWorkers) scales out over several slices.
// [JaxTrainer.Compile] checks every rule Ray's ScalingConfig enforces and the
// TPU catalog's, reports every problem at once with its field path, and
// yields a [placement.Plan]: the slice placement Ray Train will make and the
// job that runs raytpu's launcher, which builds the real JaxTrainer inside
// Ray and calls fit().
//
// [JaxTrainer.Fit] mirrors trainer.fit(): it compiles and runs the plan on
// a backend.Runner (the simulator, a Ray cluster, KubeRay) and returns a
// [Result]. The package itself never talks to a cluster and imports no
// backend.
package train
