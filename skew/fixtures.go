package skew

import (
	"fmt"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// Names the scenarios use, so specs and oracle agree on what is sent.
const (
	SeccompPodAnnotation             = "seccomp.security.alpha.kubernetes.io/pod"
	SeccompContainerAnnotationPrefix = "container.seccomp.security.alpha.kubernetes.io/"
	AppArmorAnnotationPrefix         = "container.apparmor.security.beta.kubernetes.io/"

	// Stored field paths of the scenario pod.
	PodSeccompType        = "spec.securityContext.seccompProfile.type"
	ContainerSeccompType  = "spec.containers[0].securityContext.seccompProfile.type"
	EphemeralSeccompType  = "spec.ephemeralContainers[0].securityContext.seccompProfile.type"
	PodAppArmorType       = "spec.securityContext.appArmorProfile.type"
	ContainerAppArmorType = "spec.containers[0].securityContext.appArmorProfile.type"
	EphemeralAppArmorType = "spec.ephemeralContainers[0].securityContext.appArmorProfile.type"
)

// SeccompContainerAnnotation is the container seccomp annotation key.
func SeccompContainerAnnotation(container string) string {
	return SeccompContainerAnnotationPrefix + container
}

// AppArmorAnnotation is the container AppArmor annotation key.
func AppArmorAnnotation(container string) string { return AppArmorAnnotationPrefix + container }

// AppArmorFieldsAt says whether an API server of version v has the
// appArmorProfile fields (from v1.30, KEP-24 §Proposal › API). Before, the
// annotations are the API: a field a client sends is an unknown field the
// API server drops, with a warning, and a scenario must express the
// profile by annotation.
func AppArmorFieldsAt(v *version.Version) bool { return aaFields.Contains(v) }

// SeccompAnnotationWarning is the exact warning upstream v1.27+ returns for a
// seccomp annotation without a field. prefix is "" for a Pod and the path
// of the pod template otherwise, e.g. "spec.template." for a Deployment,
// "template." for a PodTemplate, "spec.jobTemplate.spec.template." for a
// CronJob. Source: pkg/api/pod/warnings.go, warningsForPodSpecAndMeta.
func SeccompAnnotationWarning(prefix, key string) string {
	return fmt.Sprintf(`%smetadata.annotations[%s]: non-functional in v1.27+; use the "seccompProfile" field instead`, prefix, key)
}

// AppArmorAnnotationWarning is the exact warning upstream v1.30+ returns for
// an AppArmor annotation without a corresponding field; prefix as for
// SeccompAnnotationWarning. Sources: pkg/registry/core/pod/strategy.go,
// applyAppArmorVersionSkew (pods); pkg/api/pod/warnings.go,
// warningsForPodSpecAndMeta (templates).
func AppArmorAnnotationWarning(prefix, container string) string {
	return fmt.Sprintf(`%smetadata.annotations[%s]: deprecated since v1.30; use the "appArmorProfile" field instead`, prefix, AppArmorAnnotation(container))
}

func intp(i int) *int    { return &i }
func boolp(b bool) *bool { return &b }

var (
	needAppArmor   = HostCondition{AppArmor: boolp(true)}
	needNoAppArmor = HostCondition{AppArmor: boolp(false)}
	needSeccomp    = HostCondition{Seccomp: boolp(true)}
)

// always is a phase that holds for every version.
func always(name string, o Observation) []Phase {
	return []Phase{{Name: name, Window: release.Window{}, Obs: o}}
}

func phase(name string, w release.Window, o Observation) Phase {
	return Phase{Name: name, Window: w, Obs: o}
}

func unresearched(name string, w release.Window, o Observation) Phase {
	return Phase{Name: name, Window: w, Obs: o, Unresearched: true}
}

func na(summary string) Observation { return Observation{Summary: summary, NotApplicable: summary} }

// win builds a rule's window from "1.30" style minors; "" leaves that end open.
var win = release.MustWindow
