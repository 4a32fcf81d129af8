package kuberay

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrConflict matches a *ConflictError.
var ErrConflict = errors.New("another field manager owns a field raytpu applies")

// ConflictError is a server-side apply that the apiserver refused because
// another field manager (a person's kubectl, a controller) owns fields
// raytpu would change. raytpu never forces: take the fields back with
// kubectl apply --server-side --force-conflicts --field-manager raytpu, or
// revert the other manager's change.
type ConflictError struct {
	// Kind, Namespace and Name name the object.
	Kind, Namespace, Name string
	// Conflicts are the contested fields, in the apiserver's order.
	Conflicts []FieldConflict
	// Err is the apiserver's error.
	Err error
}

// FieldConflict is one contested field.
type FieldConflict struct {
	// Field is the field path, as the apiserver writes it
	// (".spec.workerGroupSpecs").
	Field string
	// Manager is the field manager that owns it.
	Manager string
}

func (e *ConflictError) Error() string {
	if e == nil {
		return "kuberay: nil *ConflictError"
	}
	parts := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		parts[i] = fmt.Sprintf("%s (owned by %q)", c.Field, c.Manager)
	}
	return fmt.Sprintf("kuberay: applying %s %s/%s: %v: %s", e.Kind, e.Namespace, e.Name, ErrConflict, strings.Join(parts, ", "))
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func (e *ConflictError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// managerRE finds the manager in a conflict cause's message:
// `conflict with "kubectl" using ray.io/v1`.
var managerRE = regexp.MustCompile(`conflict with "([^"]*)"`)

// applyError wraps an apply's error: a field-manager conflict becomes a
// *ConflictError naming every field and its owner.
func applyError(kind, ns, name string, err error) error {
	var st apierrors.APIStatus
	if apierrors.IsConflict(err) && errors.As(err, &st) && st.Status().Details != nil {
		ce := &ConflictError{Kind: kind, Namespace: ns, Name: name, Err: err}
		for _, c := range st.Status().Details.Causes {
			if c.Type != metav1.CauseTypeFieldManagerConflict {
				continue
			}
			fc := FieldConflict{Field: c.Field}
			if m := managerRE.FindStringSubmatch(c.Message); m != nil {
				fc.Manager = m[1]
			}
			ce.Conflicts = append(ce.Conflicts, fc)
		}
		if len(ce.Conflicts) > 0 {
			return ce
		}
	}
	return fmt.Errorf("kuberay: applying %s %s/%s: %w", kind, ns, name, err)
}

// applyOptions are the options of every apply: field manager "raytpu",
// never forced, and a server-side dry run when WithDryRun is set.
func (b *Backend) applyOptions() metav1.ApplyOptions {
	o := metav1.ApplyOptions{FieldManager: FieldManager}
	if b.dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	return o
}
