package kuberay

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// MaxRayJobName is KubeRay's limit on a RayJob name: the RayCluster it
// creates appends "-" and a 5-character suffix and must stay within 53
// characters, so its head Service name stays within 63
// (ray-operator/controllers/ray/utils/constant.go, MaxRayJobNameLength).
const MaxRayJobName = 47

// MaxRayServiceName is KubeRay's limit on a RayService name, for the same
// reason (MaxRayServiceNameLength).
const MaxRayServiceName = 47

// MaxRayClusterName is KubeRay's limit on a RayCluster name: its head
// Service appends "-head-svc" and must stay within 63 characters
// (MaxRayClusterNameLength).
const MaxRayClusterName = 53

// NameFor makes a plan name a valid RayJob name: lower case, runs of other
// characters as one "-", starting with a letter, at most MaxRayJobName
// characters. An empty result is "raytpu".
func NameFor(planName string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(planName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > MaxRayJobName {
		s = strings.TrimRight(s[:MaxRayJobName], "-")
	}
	if s == "" {
		return "raytpu"
	}
	return s
}

// NewName is NameFor(planName) with a random 6-hex-digit suffix, for a run
// that was given no id.
func NewName(planName string) string {
	var b [3]byte
	rand.Read(b[:])
	base := NameFor(planName)
	if len(base) > MaxRayJobName-7 {
		base = strings.TrimRight(base[:MaxRayJobName-7], "-")
	}
	return base + "-" + hex.EncodeToString(b[:])
}

// labelValue makes s a valid label value (at most 63 of [A-Za-z0-9-_.],
// alphanumeric at both ends).
func labelValue(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	v := b.String()
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "-_.")
}

// isURI reports whether s is a remote package URI (scheme://...) rather
// than a local path.
func isURI(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && !strings.ContainsAny(s[:i], "/\\.")
}
