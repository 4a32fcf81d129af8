package kuberay

import (
	"strings"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/raytpu/raytpu/field"
)

// validateService checks a RayService as validateJob checks a RayJob: the
// name (DNS-1035, at most 47 characters: KubeRay's
// ValidateRayServiceMetadata), spec.serveConfigV2 (present and a YAML
// document KubeRay can decode, as its updateServeDeployment does before
// sending it to Ray), no head Service name (ValidateRayServiceSpec), and
// the cluster under spec.rayClusterConfig with every rule of validateJob.
func validateService(svc *rayv1ac.RayServiceApplyConfiguration) error {
	errs := validateMeta(deref(svc.Name), deref(svc.Namespace), "RayService", MaxRayServiceName)
	errs = append(errs, checkSize(svc, "RayService")...)
	spec := field.NewPath("spec")
	if svc.Spec == nil {
		return append(errs, field.Required(spec, "a RayService spec"))
	}
	s := svc.Spec
	switch cfg := deref(s.ServeConfigV2); {
	case strings.TrimSpace(cfg) == "":
		errs = append(errs, field.Required(spec.Child("serveConfigV2"), "the Serve config to deploy"))
	default:
		var m map[string]any
		if err := yaml.Unmarshal([]byte(cfg), &m); err != nil {
			errs = append(errs, field.Invalid(spec.Child("serveConfigV2"), cfg, "a YAML document KubeRay can decode: "+err.Error()))
		} else if apps, ok := m["applications"].([]any); !ok || len(apps) == 0 {
			errs = append(errs, field.Required(spec.Child("serveConfigV2").Child("applications"), "at least one Serve application"))
		}
	}
	cluster := spec.Child("rayClusterConfig")
	if s.RayClusterSpec == nil {
		return append(errs, field.Required(cluster, "the RayCluster that serves the applications"))
	}
	if h := s.RayClusterSpec.HeadGroupSpec; h != nil && h.HeadService != nil && h.HeadService.Name != "" {
		errs = append(errs, field.Forbidden(cluster.Child("headGroupSpec", "headService", "metadata", "name"), "KubeRay names the head Service of a RayService's clusters itself"))
	}
	errs = append(errs, validateCluster(s.RayClusterSpec, cluster)...)
	errs = append(errs, validateQueuedService(svc)...)
	return errs.Err()
}

// validateRayCluster checks a RayCluster as validateJob checks a RayJob: the
// name (DNS-1035, at most 53 characters: KubeRay's
// ValidateRayClusterMetadata) and the cluster spec with every rule of
// validateJob.
func validateRayCluster(rc *rayv1ac.RayClusterApplyConfiguration) error {
	errs := validateMeta(deref(rc.Name), deref(rc.Namespace), "RayCluster", MaxRayClusterName)
	errs = append(errs, checkSize(rc, "RayCluster")...)
	if rc.Spec == nil {
		return append(errs, field.Required(field.NewPath("spec"), "a RayCluster spec"))
	}
	errs = append(errs, validateCluster(rc.Spec, field.NewPath("spec"))...)
	errs = append(errs, validateQueuedCluster(rc)...)
	return errs.Err()
}
