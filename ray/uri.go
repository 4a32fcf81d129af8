package ray

// IsURI reports whether a runtime_env working_dir or py_modules entry is a
// URI that Ray fetches itself (gcs://, https://, s3://, ...) rather than a
// local path that must be packaged and uploaded first.
func IsURI(s string) bool { return isURI(s) }
