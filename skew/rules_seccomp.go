package skew

import (
	"fmt"

	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew/release"
)

// Seccomp rules: KEP-135 (KEP-135 "Seccomp to GA").
//
// Upstream sources read (seccompRead, one release per minor since the fields
// exist): k8s.io/kubernetes v1.19.16, v1.20.15, v1.21.14, v1.22.17, v1.23.17,
// v1.24.17, v1.25.16, v1.26.15, v1.27.16, v1.28.15, v1.29.6, v1.30.14,
// v1.31.14, v1.32.13, v1.33.13, v1.34.4, v1.35.4, v1.36.3, v1.37.2; with
// k8s.io/apiserver v0.22.17, v0.24.17, v0.26.15 (pkg/registry/rest/create.go,
// BeforeCreate), and, for what the kubelet's CRI request becomes on the
// runtime of skewproof's node images, github.com/containerd/containerd
// v1.7.24 and github.com/opencontainers/runc v1.1.15. Findings, with the
// release in which each changes:
//
//   - Field/annotation sync, pkg/registry/core/pod/strategy.go,
//     applySeccompVersionSkew, called from PrepareForCreate only (never on
//     update, never from the ephemeralcontainers subresource,
//     podEphemeralContainersStrategy.PrepareForUpdate):
//     v1.19-v1.24 both ways (pkg/api/pod/util.go, SeccompAnnotationForField
//     and SeccompFieldForAnnotation); v1.25-v1.26 annotation to field only
//     (strategy.go, seccompFieldForAnnotation); gone from v1.27. The KEP
//     plans to end both in v1.23 (§Upgrade / Downgrade): field to
//     annotation shipped two minors late, annotation to field four.
//   - Warnings, pkg/api/pod/warnings.go, warningsForPodSpecAndMeta: none
//     before v1.22 (no such file); from v1.22 one per annotation without a
//     field, reading "deprecated since v1.19" (v1.22), "deprecated since
//     v1.19, non-functional in v1.25+" (v1.23, v1.24), "deprecated since
//     v1.19, non-functional in a future release" (v1.25, v1.26) and
//     "non-functional in v1.27+" (v1.27 on). BeforeCreate computes them
//     after PrepareForCreate, so while the API server copies annotations to
//     fields (to v1.26) a pod's annotations never warn; a pod template's do
//     (GetWarningsForPodTemplate from every workload strategy's
//     WarningsOnCreate, v1.22 on).
//   - Validation, pkg/apis/core/validation/validation.go:
//     validateSeccompProfileField, validateLocalDescendingPath,
//     validatePathNoBacksteps, ValidateSeccompProfile,
//     ValidateSeccompPodAnnotations and validateSeccompAnnotationsAndFields /
//     validateSeccompAnnotationsAndFieldsMatch (from ValidatePodCreate and
//     ValidatePodTemplateSpec) are the same in every release read
//     (validateSeccompProfileType changes only the Go type of its list of
//     supported values, in v1.29). ValidatePodSpecificAnnotationUpdates lets
//     seccomp annotations change in every release read.
//   - Kubelet, pkg/kubelet/kuberuntime/security_context.go,
//     determineEffectiveSecurityContext, with helpers.go: v1.19 sends only the
//     CRI SeccompProfilePath, from getSeccompProfile, which honours
//     annotations (container field, container annotation, pod field, pod
//     annotation); v1.20-v1.27 send SeccompProfilePath
//     (getSeccompProfilePath: annotations honoured to v1.24, ignored from
//     v1.25) and the structured Seccomp (getSeccompProfile: fields only,
//     never nil); v1.28 on only Seccomp. containerd v1.7.24,
//     pkg/cri/server/container_create_linux.go, containerSpecOpts, uses
//     Seccomp whenever it is set and SeccompProfilePath only without it: from
//     v1.20 a kubelet on containerd applies the fields only.
//   - Ephemeral containers: the EphemeralContainers gate is alpha and off by
//     default to v1.22, beta and on from v1.23 (pkg/features/kube_features.go).
//   - Seccomp root: v1.19-v1.22 the --seccomp-profile-root flag, default
//     /var/lib/kubelet/seccomp (cmd/kubelet/app/options/options.go, the
//     default root dir, not --root-dir); from v1.23 <root-dir>/seccomp
//     (pkg/kubelet/kuberuntime/kuberuntime_manager.go,
//     NewKubeGenericRuntimeManager).
//   - batch/v1 CronJob, one of the template scenario's workloads, is served
//     from v1.21 (pkg/registry/batch/rest/storage_batch.go, v1Storage).

const seccompKEP = "KEP-135"

var (
	// KEP: "If this feature is implemented in v1.19, I propose v1.23 as a
	// target for removal of the old behavior" (§Upgrade / Downgrade).
	seccompKEPSyncWindow   = win("1.19", "1.23")
	seccompBeforeFields    = win("", "1.19")
	seccompFieldsOnwards   = win("1.19", "")
	seccompKEPAfterRemoval = win("1.23", "")
	// Upstream: field to annotation v1.19-v1.24, annotation to field
	// v1.19-v1.26 (applySeccompVersionSkew).
	seccompUpFieldToAnn    = win("1.19", "1.25")
	seccompUpNoFieldToAnn  = win("1.25", "")
	seccompUpAnnToField    = win("1.19", "1.27")
	seccompUpNoAnnToField  = win("1.27", "")
	seccompEphemeralOnward = win("1.23", "")
	notYet                 = na("seccomp fields do not exist before v1.19")
	// seccompBeforeFieldsPhase is the first phase of every rule about the fields.
	seccompBeforeFieldsPhase = phase("before seccomp fields", seccompBeforeFields, notYet)
	// seccompNoEphemeralPhase holds in plan and upstream alike: before v1.23
	// a default cluster has no ephemeral containers, so neither the KEP's
	// rule nor upstream's behaviour can be observed.
	seccompNoEphemeralPhase = phase("ephemeral containers off by default", win("1.19", "1.23"),
		na("ephemeral containers are alpha and off by default (EphemeralContainers feature gate) before v1.23"))
)

var seccompPodAnnKey = SeccompPodAnnotation
var seccompCtrAnnKey = SeccompContainerAnnotationPrefix + names.ContainerName

// seccompWarning is the exact warning of upstream minor v1.22-v1.26 for a
// seccomp annotation without a field (pkg/api/pod/warnings.go,
// warningsForPodSpecAndMeta); from v1.27 it is SeccompAnnotationWarning.
func seccompWarning(prefix, key, text string) string {
	return fmt.Sprintf(`%smetadata.annotations[%s]: %s; use the "seccompProfile" field instead`, prefix, key, text)
}

// The texts of seccompWarning, per release.
const (
	seccompWarn122      = "deprecated since v1.19"
	seccompWarn123to124 = "deprecated since v1.19, non-functional in v1.25+"
	seccompWarn125to126 = "deprecated since v1.19, non-functional in a future release"
)

func seccompFieldRule(id, title, ref, source string, o Observation) Rule {
	ps := []Phase{seccompBeforeFieldsPhase, phase("seccomp GA", seccompFieldsOnwards, o)}
	return Rule{
		ID: id, Title: title, KEPRef: ref, Component: Apiserver,
		KEPWindow: seccompFieldsOnwards, UpstreamWindow: seccompFieldsOnwards, Source: source,
		KEP: ps, Upstream: ps,
	}
}

func seccompKubeletRule(id, title, ref, source string, host HostCondition, o Observation) Rule {
	r := seccompFieldRule(id, title, ref, source, o)
	r.Component = Kubelet
	r.Host = host
	return r
}

// seccompCopy is one way of upstream's field/annotation copy on pod
// creation: its phase while the API server copies (window) and the one
// after the copy was removed.
type seccompCopy struct {
	name, removed string
	window, after release.Window
}

var (
	seccompUpFieldToAnnCopy = seccompCopy{"fields copied to annotations (to v1.24)", "field-to-annotation copy removed (v1.25)", seccompUpFieldToAnn, seccompUpNoFieldToAnn}
	seccompUpAnnToFieldCopy = seccompCopy{"annotations copied to fields (to v1.26)", "annotation-to-field copy removed (v1.27)", seccompUpAnnToField, seccompUpNoAnnToField}
)

// seccompSyncRule builds an API server rule about the field/annotation
// copy on pod creation: synced is what a pod shows while the API server
// copies, after once it no longer does; in the plan up to the removal of
// annotation support (v1.23), upstream as up says.
func seccompSyncRule(id, title, ref, source string, up seccompCopy, synced, after Observation) Rule {
	return Rule{
		ID: id, Title: title, KEPRef: ref, Component: Apiserver,
		KEPWindow: seccompKEPSyncWindow, UpstreamWindow: up.window, Source: source,
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("field/annotation sync", seccompKEPSyncWindow, synced),
			phase("annotation support removed (v1.23)", seccompKEPAfterRemoval, after),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase(up.name, up.window, synced),
			phase(up.removed, up.after, after),
		},
	}
}

// The scenarios in which a container gets its profile from the pod-level
// field (seccomp/update/annotation-ignored, seccomp/kubelet/precedence,
// seccomp/ephemeral/inherit) set it to Localhost SeccompLocalhostProfile,
// which denies mkdir: its effect differs from the runtime default's (which
// allows mkdir and blocks personality(ADDR_NO_RANDOMIZE)), so "runs with
// the pod's profile" is shown by behaviour and cannot be told apart from
// "runs with some filter" by the mode alone. The kubelet picks the
// container's profile the same way whatever the profile's type
// (pkg/kubelet/kuberuntime/helpers.go getSeccompProfile: container field,
// then pod field; v1.20.15…v1.37.2), so the KEP's statements hold for it
// unchanged.
var (
	// seccompDenyMkdirRuns: running with the pod-level Localhost
	// deny-mkdir profile, shown by behaviour.
	seccompDenyMkdirRuns = &ContainerOutcome{State: Running, SeccompMode: intp(2), Effect: EffectSeccompDenyMkdir,
		Note: "mkdir fails with EPERM, other syscalls work"}
	// seccompUpdateIgnored: a seccomp annotation update changes nothing.
	seccompUpdateIgnored = Observation{Summary: "update accepted; after a restart the container still runs with the pod field's profile (Localhost deny-mkdir: Seccomp: 2, mkdir EPERM)",
		Admission: Accepted, Container: seccompDenyMkdirRuns}
	// seccompPodFieldApplies: the kubelet no longer honours annotations.
	seccompPodFieldApplies = Observation{Summary: "pod field Localhost deny-mkdir + container annotation unconfined: annotation ignored, pod field applies (Seccomp: 2, mkdir EPERM)",
		Container: seccompDenyMkdirRuns}
)

// seccompEphemeralRule is a rule about ephemeral containers: not applicable
// before v1.23 (seccompNoEphemeralPhase), o from then on, in plan and
// upstream alike.
func seccompEphemeralRule(id, title, ref, source string, c Component, host HostCondition, o Observation) Rule {
	ps := []Phase{seccompBeforeFieldsPhase, seccompNoEphemeralPhase, phase("seccomp GA, ephemeral containers on", seccompEphemeralOnward, o)}
	return Rule{
		ID: id, Title: title, KEPRef: ref, Component: c, Host: host, Source: source,
		KEPWindow: seccompEphemeralOnward, UpstreamWindow: seccompEphemeralOnward,
		KEP: ps, Upstream: ps,
	}
}

var seccompRules = []Rule{
	seccompFieldRule("seccomp/api/types",
		"Unconfined, RuntimeDefault, Localhost+localhostProfile accepted at pod and container level",
		seccompKEP+" §Proposal › API › Pod API",
		"pkg/apis/core/validation/validation.go: validateSeccompProfileField, validateSeccompProfileType (v1.19.16…v1.37.2)",
		Observation{Summary: "accepted; seccompProfile stored as sent at pod and container level", Admission: Accepted,
			Fields: map[string]string{PodSeccompType: "RuntimeDefault", ContainerSeccompType: "Localhost"}}),

	seccompFieldRule("seccomp/api/localhost-profile-required",
		"Localhost without localhostProfile rejected; localhostProfile with another type rejected",
		seccompKEP+" §Proposal › API › Pod API (SeccompProfile union)",
		"pkg/apis/core/validation/validation.go: validateSeccompProfileField (v1.19.16…v1.37.2)",
		Observation{Summary: "rejected", Admission: Rejected,
			MessageContains: []string{"must be set when seccomp type is Localhost", "can only be set when seccomp type is Localhost"}}),

	seccompFieldRule("seccomp/api/localhost-path-invalid",
		"absolute or descending localhostProfile (/etc/x.json, ../x.json) rejected",
		seccompKEP+" §Failure and Fallback Strategy, row 6",
		"pkg/apis/core/validation/validation.go: validateSeccompProfileField → validateLocalDescendingPath, validatePathNoBacksteps (v1.19.16…v1.37.2)",
		Observation{Summary: "pod not created", Admission: Rejected,
			MessageContains: []string{"must be a relative path", "must not contain '..'"}}),

	{
		ID: "seccomp/api/runtime-profile-invalid", Title: "annotation runtime/default-audit rejected",
		KEPRef: seccompKEP + " §Failure and Fallback Strategy, row 5; §Version Skew Strategy › Runtime Profiles", Component: Apiserver,
		KEPWindow: release.Window{}, UpstreamWindow: release.Window{},
		Source: "pkg/apis/core/validation/validation.go: ValidateSeccompPodAnnotations → ValidateSeccompProfile (v1.19.16…v1.37.2; to v1.26.15 " +
			"pkg/registry/core/pod/strategy.go applySeccompVersionSkew copies no field for an unknown value)",
		KEP: always("runtime profiles other than runtime/default rejected", Observation{Summary: "pod not created", Admission: Rejected,
			MessageContains: []string{`Invalid value: "runtime/default-audit": must be a valid seccomp profile`}}),
	},

	seccompFieldRule("seccomp/create/none",
		"nothing set: no field, no annotation added",
		seccompKEP+" §Version Skew Strategy › Pod Creation",
		"pkg/registry/core/pod/strategy.go: PrepareForCreate → applySeccompVersionSkew (nothing to copy; v1.19.16…v1.26.15), no seccomp handling from v1.27.16",
		Observation{Summary: "accepted; neither field nor annotation added", Admission: Accepted, NoWarnings: true,
			AbsentAnnotations: []string{seccompPodAnnKey, seccompCtrAnnKey}, AbsentFields: []string{PodSeccompType, ContainerSeccompType}}),

	seccompSyncRule("seccomp/create/field-to-annotation", "field only: annotation added (pod and container)",
		seccompKEP+" §Version Skew Strategy › Pod Creation",
		"pkg/registry/core/pod/strategy.go: PrepareForCreate → applySeccompVersionSkew with pkg/api/pod/util.go SeccompAnnotationForField "+
			"(v1.19.16…v1.24.17); applySeccompVersionSkew copies annotations to fields only in v1.25.16, v1.26.15; gone in v1.27.16…v1.37.2",
		seccompUpFieldToAnnCopy,
		Observation{Summary: "annotations added from the fields", Admission: Accepted,
			Annotations: map[string]string{seccompPodAnnKey: "runtime/default", seccompCtrAnnKey: "localhost/" + names.SeccompLocalhostProfile}},
		Observation{Summary: "fields stored as sent; no annotation added", Admission: Accepted,
			AbsentAnnotations: []string{seccompPodAnnKey, seccompCtrAnnKey}}),

	seccompSyncRule("seccomp/create/annotation-to-field", "annotation only: field populated (unconfined, runtime/default, docker/default, localhost/<p>)",
		seccompKEP+" §Version Skew Strategy › Pod Creation",
		"pkg/registry/core/pod/strategy.go: PrepareForCreate → applySeccompVersionSkew (v1.19.16…v1.26.15; the value through pkg/api/pod/util.go "+
			"SeccompFieldForAnnotation to v1.24.17, strategy.go seccompFieldForAnnotation in v1.25.16, v1.26.15; docker/default → RuntimeDefault); gone in v1.27.16…v1.37.2",
		seccompUpAnnToFieldCopy,
		Observation{Summary: "fields populated from the annotations (docker/default → RuntimeDefault)", Admission: Accepted,
			Fields: map[string]string{PodSeccompType: "RuntimeDefault", ContainerSeccompType: "Localhost"}},
		Observation{Summary: "annotations stored as sent; no field populated", Admission: Accepted,
			Annotations: map[string]string{seccompPodAnnKey: "runtime/default", seccompCtrAnnKey: "localhost/" + names.SeccompLocalhostProfile}, AbsentFields: []string{PodSeccompType, ContainerSeccompType}}),

	seccompFieldRule("seccomp/create/match",
		"field and annotation both set and equal: accepted",
		seccompKEP+" §Version Skew Strategy › Pod Creation",
		"pkg/apis/core/validation/validation.go: ValidatePodCreate → validateSeccompAnnotationsAndFields (v1.19.16…v1.37.2)",
		Observation{Summary: "accepted; field and annotation stored as sent", Admission: Accepted,
			Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, Fields: map[string]string{PodSeccompType: "RuntimeDefault"}}),

	seccompFieldRule("seccomp/create/mismatch",
		"field and annotation both set and different: rejected",
		seccompKEP+" §Version Skew Strategy › Pod Creation (\"the values MUST match\")",
		"pkg/apis/core/validation/validation.go: validateSeccompAnnotationsAndFieldsMatch (v1.19.16…v1.37.2)",
		Observation{Summary: "rejected", Admission: Rejected, MessageContains: []string{"seccomp type in annotation and field must match"}}),

	{
		ID: "seccomp/create/warning", Title: "annotation use warns; exact text per version",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Pod Creation (warning mechanism)",
		Component: Apiserver, KEPWindow: seccompFieldsOnwards, UpstreamWindow: seccompUpNoAnnToField,
		Source: "pkg/api/pod/warnings.go: warningsForPodSpecAndMeta (none before v1.22.17; \"non-functional in v1.27+\" from v1.27.16); " +
			"k8s.io/apiserver pkg/registry/rest/create.go: BeforeCreate (v0.22.17, v0.24.17, v0.26.15: WarningsOnCreate after PrepareForCreate, " +
			"whose applySeccompVersionSkew has copied the annotations to fields to v1.26.15)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("annotation use warned; support ends in v1.23", seccompFieldsOnwards, Observation{Summary: "accepted with a warning about the annotations' use (mechanism and text not fixed by the KEP)", Admission: Accepted,
				WarningContains: []string{seccompPodAnnKey, seccompCtrAnnKey}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase("no seccomp warnings yet", win("1.19", "1.22"), Observation{Summary: "accepted without a warning (no seccomp warning exists before v1.22)", Admission: Accepted, NoWarnings: true}),
			phase("annotations copied to fields before warnings are computed", win("1.22", "1.27"), Observation{Summary: "accepted without a warning: the API server copied the annotations to fields before it computed the warnings", Admission: Accepted, NoWarnings: true}),
			phase("non-functional-in-v1.27+ warning", seccompUpNoAnnToField, Observation{Summary: "accepted with one warning per annotation without a field", Admission: Accepted,
				Warnings: []string{SeccompAnnotationWarning("", seccompPodAnnKey), SeccompAnnotationWarning("", seccompCtrAnnKey)}}),
		},
	},

	seccompFieldRule("seccomp/update/field-immutable",
		"changing the seccomp field of a pod rejected",
		seccompKEP+" §Version Skew Strategy › Pod Update",
		"pkg/apis/core/validation/validation.go: ValidatePodUpdate (pod spec updates restricted; v1.19.16…v1.37.2)",
		Observation{Summary: "update rejected", Admission: Rejected, MessageContains: []string{"pod updates may not change fields other than"}}),

	{
		ID: "seccomp/update/annotation-ignored", Title: "annotation update accepted and never changes the profile a restarted container runs with",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Pod Update",
		Component: Kubelet, KEPWindow: seccompFieldsOnwards, UpstreamWindow: win("1.20", ""), Host: needSeccomp,
		Source: "pkg/apis/core/validation/validation.go: ValidatePodSpecificAnnotationUpdates (seccomp annotations mutable, values validated; v1.19.16…v1.37.2); " +
			"pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile (v1.19.16: the CRI SeccompProfilePath, the container annotation before the pod field; " +
			"v1.20.15…v1.37.2: the structured Seccomp, fields only, which containerd v1.7.24 pkg/cri/server/container_create_linux.go containerSpecOpts prefers)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("annotation updates ignored", seccompFieldsOnwards, seccompUpdateIgnored),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase("kubelet v1.19 honours the updated container annotation", win("1.19", "1.20"), Observation{Summary: "update accepted; after a restart the container runs with the updated container annotation's profile (unconfined)",
				Admission: Accepted, Container: &ContainerOutcome{State: Running, SeccompMode: intp(0)}}),
			phase("annotation updates ignored (the kubelet sends the fields' profile)", win("1.20", ""), seccompUpdateIgnored),
		},
	},

	{
		ID: "seccomp/template/no-sync", Title: "PodTemplate and workloads stored as sent; warnings",
		KEPRef:    seccompKEP + " §Version Skew Strategy › PodTemplates",
		Component: Apiserver, KEPWindow: win("1.21", ""), UpstreamWindow: seccompUpNoAnnToField,
		Source: "pkg/api/pod/warnings.go: GetWarningsForPodTemplate → warningsForPodSpecAndMeta, from every workload strategy's WarningsOnCreate " +
			"(none before v1.22.17; texts of v1.22.17, v1.23.17-v1.24.17, v1.25.16-v1.26.15 and v1.27.16…v1.37.2); " +
			"pkg/apis/core/validation/validation.go: ValidatePodTemplateSpec (also rejects field/annotation mismatch); " +
			"pkg/registry/batch/rest/storage_batch.go: v1Storage (batch/v1 CronJob from v1.21.14)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			seccompNoCronJobPhase,
			phase("templates ignored; warning that support ends in v1.23", win("1.21", ""), Observation{Summary: "Deployment stored as sent (annotation only, no field); warned about the annotation's use (mechanism and text not fixed by the KEP)",
				Admission: Accepted, Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, AbsentFields: []string{PodSeccompType},
				WarningContains: []string{seccompPodAnnKey}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			seccompNoCronJobPhase,
			phase("templates ignored; no seccomp warnings yet", win("1.21", "1.22"), seccompTemplate(nil, "no warning (no seccomp warning exists before v1.22)")),
			phase("templates ignored; deprecated-since-v1.19 warning", win("1.22", "1.23"), seccompTemplate([]string{seccompWarning("spec.template.", seccompPodAnnKey, seccompWarn122)}, "warning per annotation")),
			phase("templates ignored; non-functional-in-v1.25+ warning", win("1.23", "1.25"), seccompTemplate([]string{seccompWarning("spec.template.", seccompPodAnnKey, seccompWarn123to124)}, "warning per annotation")),
			phase("templates ignored; non-functional-in-a-future-release warning", win("1.25", "1.27"), seccompTemplate([]string{seccompWarning("spec.template.", seccompPodAnnKey, seccompWarn125to126)}, "warning per annotation")),
			phase("templates ignored; non-functional-in-v1.27+ warning", seccompUpNoAnnToField, seccompTemplate([]string{SeccompAnnotationWarning("spec.template.", seccompPodAnnKey)}, "warning per annotation")),
		},
	},

	seccompSyncRule("seccomp/template/instantiation", "pods made from a template follow the creation rules",
		seccompKEP+" §Version Skew Strategy › PodTemplates (\"resolution will happen on template instantiation\")",
		"pkg/registry/core/pod/strategy.go: PrepareForCreate → applySeccompVersionSkew (same path as any pod create; annotation to field v1.19.16…v1.26.15, gone in v1.27.16…v1.37.2)",
		seccompUpAnnToFieldCopy,
		Observation{Summary: "the ReplicaSet's pod (annotation only in template) gets the field", Admission: Accepted,
			Fields: map[string]string{PodSeccompType: "RuntimeDefault"}},
		Observation{Summary: "the ReplicaSet's pod keeps the annotation; no field populated", Admission: Accepted,
			Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, AbsentFields: []string{PodSeccompType}}),

	seccompEphemeralRule("seccomp/ephemeral/inherit",
		"ephemeral container without a profile runs with the pod's",
		seccompKEP+" §Version Skew Strategy › Pod Update (ephemeral containers)",
		"pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile (pod field when the container has none; v1.23.17…v1.37.2); "+
			"pkg/features/kube_features.go: EphemeralContainers (off by default to v1.22.17)", Kubelet, needSeccomp,
		Observation{Summary: "pod field Localhost deny-mkdir: the ephemeral container runs with Seccomp: 2 and mkdir fails with EPERM",
			Container: seccompDenyMkdirRuns}),

	seccompEphemeralRule("seccomp/ephemeral/override",
		"ephemeral container with its own field runs with it",
		seccompKEP+" §Version Skew Strategy › Pod Update (ephemeral containers)",
		"pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile (container field first; v1.23.17…v1.37.2); "+
			"pkg/features/kube_features.go: EphemeralContainers (off by default to v1.22.17)", Kubelet, needSeccomp,
		Observation{Summary: "pod Localhost deny-mkdir, ephemeral container Unconfined: it runs with Seccomp: 0",
			Container: &ContainerOutcome{State: Running, SeccompMode: intp(0)}}),

	seccompEphemeralRule("seccomp/ephemeral/no-annotation-sync",
		"no annotation is synced for an ephemeral container",
		seccompKEP+" §Version Skew Strategy › Pod Update (\"Ephemeral container's will never sync with a seccomp annotation\")",
		"pkg/registry/core/pod/strategy.go: podEphemeralContainersStrategy.PrepareForUpdate (no seccomp handling; v1.23.17…v1.37.2); "+
			"pkg/features/kube_features.go: EphemeralContainers (off by default to v1.22.17)", Apiserver, HostCondition{},
		Observation{Summary: "ephemeral container added; no annotation for it", Admission: Accepted,
			AbsentAnnotations: []string{SeccompContainerAnnotation(names.EphemeralContainerName)}, Fields: map[string]string{EphemeralSeccompType: "Unconfined"}}),

	{
		ID: "seccomp/kubelet/precedence", Title: "container field > container annotation > pod field > pod annotation, as the kubelet honours annotations",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Kubelet Backwards compatibility",
		Component: Kubelet, KEPWindow: seccompKEPSyncWindow, UpstreamWindow: seccompUpAnnToField, Host: needSeccomp,
		// The pod is created with a pod field and a container annotation:
		// while the API server copies annotations to fields (to v1.26) the
		// container gets the field Unconfined before any kubelet sees the
		// pod, so the API server's version decides the outcome.
		UpstreamAt: Apiserver,
		Source: "pkg/registry/core/pod/strategy.go: applySeccompVersionSkew copies the container annotation into the container field on create " +
			"(v1.19.16…v1.26.15), so the container runs unconfined on any kubelet; pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile " +
			"(v1.19.16: the CRI SeccompProfilePath, container annotation before pod field; v1.20.15…v1.37.2: the structured Seccomp from the fields only, " +
			"which containerd v1.7.24 pkg/cri/server/container_create_linux.go containerSpecOpts prefers to SeccompProfilePath)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("fields and annotations honoured", seccompKEPSyncWindow, Observation{Summary: "pod field Localhost deny-mkdir + container annotation unconfined: container annotation wins (Seccomp: 0)",
				Container: &ContainerOutcome{State: Running, SeccompMode: intp(0)}}),
			phase("fields only (annotations removed v1.23)", seccompKEPAfterRemoval, seccompPodFieldApplies),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			// The stored container field Unconfined is what explains the
			// outcome: asserted with it (applySeccompVersionSkew,
			// v1.19.16…v1.26.15).
			phase("container annotation copied to the container field by the API server (to v1.26)", seccompUpAnnToField, Observation{Summary: "pod field Localhost deny-mkdir + container annotation unconfined: the API server sets the container field Unconfined, which wins (Seccomp: 0)",
				Fields:    map[string]string{ContainerSeccompType: "Unconfined"},
				Container: &ContainerOutcome{State: Running, SeccompMode: intp(0)}}),
			phase("fields only (no copy from v1.27; kubelets send the fields' profile)", seccompUpNoAnnToField, seccompPodFieldApplies),
		},
	},

	withRuntimes(seccompKubeletRule("seccomp/kubelet/enforce",
		"RuntimeDefault gives Seccomp: 2, Unconfined 0; a syscall the runtime default blocks fails",
		seccompKEP+" §Proposal › RuntimeProfile",
		"pkg/kubelet/kuberuntime/helpers.go: fieldSeccompProfile (v1.20.15…v1.37.2; fieldProfile in v1.19.16); containerd v1.7.24 "+
			"pkg/cri/server/container_create_linux.go: generateSeccompSpecOpts (RuntimeDefault → contrib/seccomp WithDefaultProfile, Unconfined → no filter)", needSeccomp,
		Observation{Summary: "RuntimeDefault container runs with Seccomp: 2 and a blocked syscall (e.g. unshare of a user namespace) fails; Unconfined runs with Seccomp: 0",
			Cases: []ContainerOutcome{
				{Case: CaseRuntimeDefault, State: Running, SeccompMode: intp(2), Effect: EffectSeccompRuntimeDefault, Note: "a syscall the runtime default blocks fails"},
				{Case: CaseUnconfined, State: Running, SeccompMode: intp(0)},
			}}), seccompEnforceRuntimes),

	seccompKubeletRule("seccomp/kubelet/localhost",
		"localhost profile under <root-dir>/seccomp denying one syscall: EPERM for it, the rest works",
		seccompKEP+" §Seccomp root path configuration; §LocalhostProfile",
		"pkg/kubelet/kuberuntime/helpers.go: fieldSeccompProfile (filepath.Join(seccompProfileRoot, localhostProfile); v1.20.15…v1.37.2, fieldProfile in v1.19.16); "+
			"the root: cmd/kubelet/app/options/options.go --seccomp-profile-root, default /var/lib/kubelet/seccomp (v1.19.16…v1.22.17), "+
			"pkg/kubelet/kuberuntime/kuberuntime_manager.go NewKubeGenericRuntimeManager <root-dir>/seccomp (v1.23.17…v1.37.2)", needSeccomp,
		Observation{Summary: "container runs with Seccomp: 2; mkdir fails with EPERM, other syscalls work",
			Container: seccompDenyMkdirRuns}),

	withRuntimes(seccompKubeletRule("seccomp/failure/row-1",
		"runtime without seccomp support: one of the two allowed outcomes, reported",
		seccompKEP+" §Failure and Fallback Strategy, row 1",
		"runtime dependent (the kubelet passes the profile through CRI); containerd v1.7.24 pkg/cri/server/container_create_linux.go: "+
			"generateSeccompSpecOpts (\"seccomp is not supported\" for a profile other than Unconfined)", HostCondition{},
		Observation{Summary: "pod created; the container either fails to start or runs without enforcement",
			Admission: Accepted,
			AnyOf: []ContainerOutcome{
				{State: Waiting, Reason: "CreateContainerError|RunContainerError|CrashLoopBackOff", Note: "fails to start"},
				{State: Running, SeccompMode: intp(0), Note: "runs without its policy enforced"},
			}}), seccompNoSeccompRuntimes),

	seccompRow2(),

	withRuntimes(seccompKubeletRule("seccomp/failure/row-3",
		"profile with an unsupported or invalid action: fails to start, retried with back-off",
		seccompKEP+" §Failure and Fallback Strategy, row 3",
		"containerd v1.7.24: pkg/cri/server/container_create_linux.go generateSeccompSpecOpts → contrib/seccomp/seccomp.go WithProfile "+
			"(reads and JSON-decodes the profile at CreateContainer; an action is a string there, not checked), pkg/cri/server/container_start.go "+
			"StartContainer (\"failed to create containerd task\"); runc v1.1.15: libcontainer/specconv/spec_linux.go CreateLibcontainerConfig → "+
			"SetupSeccomp → libcontainer/seccomp/config.go ConvertStringToAction (\"string SCMP_ACT_NOT_AN_ACTION is not a valid action for seccomp\"), "+
			"so runc create fails and the kubelet retries the start with back-off; CRI-O and crun: the rule's runtime variants (docs/runtimes.md)",
		needSeccomp,
		Observation{Summary: "pod created; container fails to start and is retried with back-off per restartPolicy",
			Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError|RunContainerError|CrashLoopBackOff"}}),
		func(Rule) []RuntimeVariant { return seccompInvalidActionRuntimes() }),

	withRuntimes(seccompKubeletRule("seccomp/failure/row-4",
		"profile file missing on the node: fails to start, retried; runs on a node that has it",
		seccompKEP+" §Failure and Fallback Strategy, row 4",
		"pkg/kubelet/kuberuntime/helpers.go: fieldSeccompProfile passes the path (v1.19.16…v1.37.2); containerd v1.7.24 contrib/seccomp/seccomp.go "+
			"WithProfile fails to read it (\"cannot load seccomp profile\" with the path) in pkg/cri/server/container_create.go CreateContainer", needSeccomp,
		Observation{Summary: "pod created; container fails to start and is retried; the same pod runs on a node with the file",
			Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError", MessageContains: names.SeccompMissingProfilePrefix}}),
		func(Rule) []RuntimeVariant { return seccompMissingProfileRuntimes() }),
}

// seccompNoCronJobPhase: the template scenario creates a batch/v1 CronJob
// among its workloads, which no release before v1.21 serves; in plan and
// upstream alike the scenario cannot be staged there.
var seccompNoCronJobPhase = phase("batch/v1 CronJob not served", win("1.19", "1.21"),
	na("the scenario's batch/v1 CronJob is not served before v1.21"))

// seccompTemplate is what the template scenario's Deployment shows: stored
// as sent (annotation only, no field), with the given warnings or none.
func seccompTemplate(warnings []string, what string) Observation {
	o := Observation{Summary: "Deployment stored as sent (annotation only, no field); " + what, Admission: Accepted,
		Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, AbsentFields: []string{PodSeccompType}}
	if len(warnings) == 0 {
		o.NoWarnings = true
	}
	o.Warnings = warnings
	return o
}

// Sub-cases of the scenarios with several containers (Observation.Cases).
const (
	CaseRuntimeDefault = "RuntimeDefault"
	CaseUnconfined     = "Unconfined"
	CaseDenyExecve     = "execve"
	CaseDenyMkdir      = "mkdir"
	CaseLogMkdir       = "log"
)

// seccompRow2 is failure-table row 2: a profile that restricts syscalls the
// container makes. The KEP allows three outcomes; the suite shows each with
// its own profile. "Fails to start" (execve denied: runc's init cannot exec
// the container process, exit code 1) shows in the container status in one
// of two ways, and which one prevails depends on the kubelet version:
//
//   - up to v1.34 the pod worker re-syncs a pod whose container is in
//     back-off every 10 s (pkg/kubelet/pod_workers.go: backOffPeriod), and
//     each sync writes the back-off error of the previous one into the
//     status: Waiting, reason CrashLoopBackOff, for most of the back-off;
//   - from v1.35 the pod worker requeues the pod at the back-off expiry
//     (pod_workers.go: kubecontainer.MinBackoffExpiration, from
//     kubernetes/kubernetes#133066), so no sync happens during the back-off
//     and the status stays Terminated (reason Error) between restarts;
//     Waiting CrashLoopBackOff shows for a moment at most.
//
// Both are the KEP's "fail to start" (the process never runs; the kubelet
// retries with back-off), so both are allowed in every version; the phases
// record which one a kubelet shows.
func seccompRow2() Rule {
	execve := []ContainerOutcome{
		{Case: CaseDenyExecve, State: Waiting, Reason: "RunContainerError|CrashLoopBackOff|CreateContainerError", Note: "execve denied: fails to start, waiting to be retried"},
		{Case: CaseDenyExecve, State: Terminated, Reason: "Error", Note: "execve denied: fails to start, exited (code 1) and restarted with back-off"},
	}
	others := []ContainerOutcome{
		{Case: CaseDenyMkdir, State: Running, SeccompMode: intp(2), Effect: EffectSeccompDenyMkdir, Note: "mkdir denied: fails with EPERM"},
		{Case: CaseLogMkdir, State: Running, SeccompMode: intp(2), Note: "SCMP_ACT_LOG: violation logged, syscall succeeds"},
	}
	obs := func(summary string) Observation {
		return Observation{Summary: summary, Admission: Accepted, Cases: append(append([]ContainerOutcome(nil), execve...), others...)}
	}
	r := seccompKubeletRule("seccomp/failure/row-2",
		"profile blocks a syscall the workload needs: start failure, misbehaviour and logging each shown",
		seccompKEP+" §Failure and Fallback Strategy, row 2",
		"runtime and workload dependent (runc applies the filter); status during back-off: pkg/kubelet/pod_workers.go (backOffPeriod re-sync up to v1.34, requeue at kubecontainer.MinBackoffExpiration from v1.35) with pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses (reasonCache)",
		needSeccomp,
		obs("pod created; denying execve: fails to start; denying mkdir: runs and misbehaves (EPERM); SCMP_ACT_LOG: runs and logs"))
	r.Upstream = []Phase{
		seccompBeforeFieldsPhase,
		phase("back-off shown as Waiting (re-sync every 10 s)", win("1.19", "1.35"),
			obs("pod created; denying execve: fails to start, mostly Waiting CrashLoopBackOff during back-off; denying mkdir: EPERM; SCMP_ACT_LOG: logged")),
		phase("back-off shown as Terminated (requeue at back-off expiry)", win("1.35", ""),
			obs("pod created; denying execve: fails to start, Terminated (Error) between restarts; denying mkdir: EPERM; SCMP_ACT_LOG: logged")),
	}
	return r
}
