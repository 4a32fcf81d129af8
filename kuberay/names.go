package kuberay

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
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

// NameFor derives the name of the KubeRay object (RayJob, RayService,
// RayCluster) a plan named planName runs as; render and apply both use it.
// A name that already is a valid object name (a DNS-1035 label of at most
// MaxRayJobName characters) is kept as it is. Any other is lower-cased,
// each run of other characters becomes one "-", it is cut to fit, and "-"
// and 8 hex digits of the SHA-256 of planName are appended: two plan names
// never derive the same object name (chät-模型 and chöt-模型 differ), and
// a derived name never collides with a name kept as it is unless that
// name ends in the same hash. An empty name is "raytpu".
func NameFor(planName string) string {
	if planName == "" {
		return "raytpu"
	}
	if len(nameErrors(planName, MaxRayJobName)) == 0 {
		return planName
	}
	sum := sha256.Sum256([]byte(planName))
	suffix := hex.EncodeToString(sum[:4])
	return suggestName(planName, MaxRayJobName-len(suffix)-1) + "-" + suffix
}

// SuggestName is a valid name of at most max characters made from name:
// lower case, each run of other characters as one "-", starting with a
// letter, cut to fit; "raytpu" (cut to max) when nothing is left. Unlike
// NameFor it adds no hash, so two names can give the same suggestion: it
// is what an error offers a user to write, never a name raytpu picks. A
// max below 1 is an error.
func SuggestName(name string, max int) (string, error) {
	if max < 1 {
		return "", fmt.Errorf("kuberay: SuggestName(%q, %d): max must be at least 1 (MaxRayJobName, MaxRayServiceName or MaxRayClusterName)", name, max)
	}
	return suggestName(name, max), nil
}

func suggestName(name string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
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
	if len(s) > max {
		s = strings.TrimRight(s[:max], "-")
	}
	if s == "" {
		return "raytpu"[:min(max, len("raytpu"))]
	}
	return s
}

// CheckName returns what is wrong with name as the name of a KubeRay
// object of at most max characters (MaxRayJobName, MaxRayServiceName,
// MaxRayClusterName): nil for a valid name; otherwise an error naming
// every rule broken, "; " between them. A max below 1 is an error too.
func CheckName(name string, max int) error {
	if max < 1 {
		return fmt.Errorf("kuberay: CheckName(%q, %d): max must be at least 1 (MaxRayJobName, MaxRayServiceName or MaxRayClusterName)", name, max)
	}
	if msgs := nameErrors(name, max); len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// nameErrors are CheckName's messages.
func nameErrors(name string, max int) []string {
	var msgs []string
	if len(name) > max {
		msgs = append(msgs, fmt.Sprintf("at most %d characters (KubeRay's limit; the objects it creates append suffixes), got %d", max, len(name)))
	}
	for _, m := range validation.IsDNS1035Label(name) {
		if !strings.Contains(m, "must be no more than") {
			msgs = append(msgs, "a DNS-1035 label: "+m)
		}
	}
	return msgs
}

// newName is NameFor(planName) with a random 6-hex-digit suffix, for a run
// that was given no id.
func newName(planName string) string {
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
