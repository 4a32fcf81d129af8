// Package packaging turns a local working_dir (or py_module) into the zip
// Ray runs it from: the one packager of raytpu, used by the Ray dashboard
// backend (ray.PackageDir, ray.HashDir, Client.UploadDir) and by KubeRay
// (kuberay.PackWorkingDir), so that both ship the same files and refuse
// the same trees.
//
// What is shipped, as Ray 2.60's Python client
// (ray._private.runtime_env.packaging) ships it: every regular file and
// every empty directory under the directory, less DefaultExcludes, the
// runtime_env excludes and what the .gitignore and .rayignore file of each
// directory excludes below it (gitignore patterns, Ray's vendored pathspec
// "gitwildmatch"); files under their path relative to the directory, with
// Ray's content hash (Tree.Hash, URI).
//
// Symbolic links: one that stays inside the directory is followed, as
// Ray's packager follows it (the zip holds what it points to under the
// link's name; a link to a directory ships that directory's files again);
// one that dangles inside the directory is hashed by its name and left out
// of the zip, as Ray does. Stricter than Ray, which follows any link:
//
//   - a link that leads outside the directory (or an ignore file that is
//     one) is refused, naming the link and its target (ErrOutside);
//   - a link back to a directory that holds it is refused (ErrLoop): the
//     walk ends instead of recursing until the path is too long;
//   - a named pipe, socket or device file is refused, naming it
//     (ErrNotRegular): Ray's hash would block on a FIFO's open.
//
// Excluded paths are never looked at, so excluding a link or a FIFO is the
// way to keep it in the directory. Links are resolved when the directory
// is walked, and every file is then opened through an os.Root of the
// directory: nothing outside it is opened, even if a path is swapped for a
// link during packaging.
//
// Limits: Options.MaxSize bounds the zip (a *SizeError, matching
// ErrTooLarge); each backend sets its transport's limit (the dashboard's
// upload size for Ray, a ConfigMap's 1 MiB for KubeRay).
//
// packaging imports nothing of raytpu: a backend of any kind may use it.
package packaging
