// Package workingdir holds tests that give the same working_dir trees to
// the entry points of both backends that ship one, the Ray dashboard
// client (ray.HashDir, ray.PackageDir) and KubeRay (kuberay.PackWorkingDir),
// and fail when they ship different files or refuse a tree differently.
// Both delegate to package runtimeenv/packaging; these tests keep it so.
//
// It sits under internal/ because it imports two backends, which no
// backend package may.
package workingdir
