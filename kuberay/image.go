package kuberay

import "strings"

// The Ray and Python versions raytpu targets; default images follow them.
const (
	RayVersion    = "2.60.0"
	PythonVersion = "3.11"
)

// ImageRepository is the official Ray image repository on Docker Hub.
const ImageRepository = "rayproject/ray"

// defaultImage is the official Ray image for a Ray and Python version,
// rayproject/ray:<ray>-py<major><minor>, Ray's documented tag scheme
// {Ray version}[-{Python version}][-{Platform}] (docker/ray/README.md in
// the Ray repository); without a platform suffix the image is the CPU one.
func defaultImage(rayVersion, pythonVersion string) string {
	return ImageRepository + ":" + rayVersion + "-py" + strings.ReplaceAll(pythonVersion, ".", "")
}

// defaultTPUImage is the TPU variant of defaultImage, with the -tpu
// platform suffix: Ray builds -tpu images with jax[tpu] installed in its
// release pipeline since TPUs became a supported accelerator (Ray 2.55).
func defaultTPUImage(rayVersion, pythonVersion string) string {
	return defaultImage(rayVersion, pythonVersion) + "-tpu"
}
