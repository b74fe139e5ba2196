package skew

import (
	"fmt"
	"strings"

	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew/release"
)

// AppArmor rules: KEP-24 (KEP-24 "Add AppArmor Support").
//
// KEP phases (§Removing annotation support): Phase 1 v1.30, Phase 2 v1.34,
// Phase 3 v1.36.
//
// Upstream sources read (appArmorRead): k8s.io/kubernetes v1.29.6, v1.30.14,
// v1.31.14, v1.32.13, v1.33.13, v1.34.4, v1.35.4, v1.36.3, v1.37.2, and
// k8s.io/pod-security-admission v0.29.6 … v0.37.2. Releases before v1.29
// were not read: there every AppArmor rule answers skip, "not researched"
// (a kubelet rule also for a kubelet older than v1.29 under a newer API
// server), however its windows begin. Findings:
//   - The appArmorProfile fields exist from v1.30 (AppArmorFields gate, beta
//     in v1.30, GA and locked in v1.31; both gates removed in v1.33:
//     pkg/features/kube_features.go, versioned_kube_features.go).
//   - pkg/registry/core/pod/strategy.go, applyAppArmorVersionSkew: copies
//     fields to annotations (pod-level field to every container without one)
//     in v1.30…v1.33 only — Phase 2 shipped on time in v1.34. It still
//     copies annotations to fields in v1.37.2 — Phase 3 has not shipped.
//   - pkg/security/apparmor/helpers.go, GetProfile: the kubelet still falls
//     back to the annotation for static pods in v1.37.2 (it reads the
//     annotation instead of copying it in pkg/kubelet/config/common.go,
//     applyDefaults, which has no AppArmor code in any served release).
//   - pkg/kubelet/kubelet.go: the AppArmor admit handler is a soft admit
//     handler in v1.29/v1.30 (pod Pending, containers waiting "Blocked") and
//     a hard one from v1.31 (pod rejected, phase Failed, reason "AppArmor").
//   - pkg/apis/core/validation/validation.go, ValidateAppArmorProfileFormat:
//     invalid annotation values are rejected with `invalid AppArmor profile
//     name: "<value>"`, not the KEP's `must be a valid AppArmor profile`.
//   - pkg/kubelet/nodestatus/setters.go, ReadyCondition: v1.29.6 appends
//     ". AppArmor enabled" to the Ready message; v1.30+ does not.
//
// Kubelet rules hold for kubelet v1.29 (which reads annotations only)
// because every kube-apiserver it may run against (v1.32 at most, by the
// skew policy) still copies fields to annotations.

const appArmorKEP = "KEP-24"

var (
	aaBeforeFields = win("", "1.30")
	aaFields       = win("1.30", "")
	aaPhase1       = win("1.30", "1.34")
	aaPhase3       = win("1.36", "")
	aaPhase12      = win("1.30", "1.36")
	aaPhase23      = win("1.34", "")
	aaNoField      = na("the appArmorProfile fields do not exist before v1.30")

	aaAnnKey        = AppArmorAnnotationPrefix + names.ContainerName
	aaLocalhostAnn  = "localhost/" + names.AppArmorLocalhostProfile
	aaEnforcedLocal = names.AppArmorLocalhostProfile + " (enforce)"
	aaNotEnabledMsg = "Cannot enforce AppArmor: AppArmor is not enabled on the host"
)

// RuntimeDefaultAppArmorProfile is what /proc/1/attr/current shows for a
// container running with the default AppArmor profile of a CRI runtime
// ("" counts as containerd, the runtime of skewproof's node images); ""
// for a runtime whose default profile was not researched. Which versions
// were read: runtimeDefaultAppArmor.
func RuntimeDefaultAppArmorProfile(runtime string) string {
	switch NormalizeRuntime(runtime) {
	case CRIO:
		return "crio-default (enforce)"
	case Containerd, "":
		return "cri-containerd.apparmor.d (enforce)"
	}
	return ""
}

// aaAppliedByOCI: the OCI runtimes read change to the profile at exec.
const aaAppliedByOCI = "applied at exec by runc@v1.1.15, runc@v1.5.2 (libcontainer/apparmor/apparmor_linux.go changeOnExec) " +
	"and crun 1.21 (src/libcrun/utils.c set_apparmor_profile)"

// runtimeDefaultAppArmor lists the runtimes whose RuntimeDefault AppArmor
// profile was read, with the source. The profile is named by the CRI
// runtime and applied by the OCI runtime at exec (runc@v1.1.15, v1.5.2
// libcontainer/apparmor/apparmor_linux.go changeOnExec; crun 1.21
// src/libcrun/utils.c set_apparmor_profile), so the OCI runtimes read are
// part of the windows.
var runtimeDefaultAppArmor = variants(
	onRuntimes(containerdRead, ociRead, "containerd@v1.7.24 pkg/cri/server/container_create_linux.go: generateApparmorSpecOpts "+
		"(RuntimeDefault → appArmorDefaultProfileName \"cri-containerd.apparmor.d\", loaded on demand by contrib/apparmor/apparmor.go "+
		"WithDefaultProfile → LoadDefaultProfile); containerd/v2@v2.4.2 internal/cri/sputil/apparmor_linux.go: GenerateApparmorSpecOpts "+
		"(the name in internal/cri/sputil/securityprofile_linux.go); privileged containers get none; "+aaAppliedByOCI, nil),
	onRuntimes(crioRead, ociRead, "cri-o@v1.34.0 internal/config/apparmor/apparmor_linux.go: (*Config).Apply (RuntimeDefault → "+
		"DefaultProfile \"crio-default\", installed when crio starts: pkg/config/config.go LoadProfile → containers/common@v0.63.0 "+
		"pkg/apparmor InstallDefault); server/container_create_linux.go: specSetApparmorProfile (privileged containers get none); "+aaAppliedByOCI, nil),
)

// runtimeDefaultAppArmorFor is the default profile of the host's runtime,
// with the source it was read in, or why it is not known.
func runtimeDefaultAppArmorFor(h HostFacts) (profile, source, notResearched string) {
	var names, srcs []string
	for _, v := range runtimeDefaultAppArmor {
		if v.Match.matches(h) {
			if n := RuntimeDefaultAppArmorProfile(v.Match.Runtime); !contains(names, n) {
				names = append(names, n)
			}
			if !contains(srcs, v.Source) {
				srcs = append(srcs, v.Source)
			}
		}
	}
	switch {
	case len(names) == 1:
		return names[0], strings.Join(srcs, "; "), ""
	case h.Runtime == "":
		// Not stated: the runtime of skewproof's node images, as always.
		return RuntimeDefaultAppArmorProfile(""), "", ""
	case len(names) == 0:
		return "", "", fmt.Sprintf("the RuntimeDefault AppArmor profile of runtime %s is not researched (researched: %s): its name is not asserted, only that it confines in enforce mode",
			describeRuntime(h), researchedWindows(runtimeDefaultAppArmor))
	}
	return "", "", fmt.Sprintf("the RuntimeDefault AppArmor profile of runtime %s depends on what the node does not say: its name is not asserted, only that it confines in enforce mode", describeRuntime(h))
}

// aaBeforeFieldsPhase is the first phase of every rule about the fields.
var aaBeforeFieldsPhase = phase("before AppArmor fields", aaBeforeFields, aaNoField)

// aaAnnAndField: accepted with the container annotation localhost/<p> and
// the container field Localhost (sent, or copied from the annotation).
func aaAnnAndField(summary string) Observation {
	return Observation{Summary: summary, Admission: Accepted,
		Annotations: map[string]string{aaAnnKey: aaLocalhostAnn}, Fields: map[string]string{ContainerAppArmorType: "Localhost"}}
}

// aaAnnNoField: accepted with the container annotation localhost/<p> and
// no container field.
func aaAnnNoField(summary string) Observation {
	return Observation{Summary: summary, Admission: Accepted,
		Annotations: map[string]string{aaAnnKey: aaLocalhostAnn}, AbsentFields: []string{ContainerAppArmorType}}
}

// aaRule builds a rule whose behaviour is the same in plan and upstream:
// not applicable before the fields exist (when fieldsOnly) and o afterwards.
func aaRule(id, title, ref string, c Component, host HostCondition, source string, fieldsOnly bool, o Observation) Rule {
	r := Rule{ID: id, Title: title, KEPRef: ref, Component: c, Host: host, Source: source}
	if fieldsOnly {
		r.KEPWindow, r.UpstreamWindow = aaFields, aaFields
		r.KEP = []Phase{aaBeforeFieldsPhase, phase("AppArmor fields", aaFields, o)}
	} else {
		r.KEP = always("AppArmor", o)
	}
	r.Upstream = r.KEP
	return r
}

// ephemeralOnTrailingKubelets gives an ephemeral-container rule its
// outcome on a kubelet that trails a v1.30+ API server. The scenario exists
// wherever the API server has the fields (APIServerWindow), and the KEP's
// rule ("it will follow the same rules for using or overriding the pod's
// AppArmor profile", §Pod Update) follows the API server (KEPAt). But
// "Ephemeral container's will never sync with an AppArmor annotation"
// (same section; upstream applyAppArmorVersionSkew runs on create only),
// and a kubelet before v1.30 reads the annotation alone (v1.29.15
// pkg/kubelet/kuberuntime/security_context.go determineEffectiveSecurityContext:
// ApparmorProfile = GetProfileNameFromPodAnnotations): it sends no profile
// for the ephemeral container, and the runtime runs it under its default
// (containerd@v1.7.24 generateApparmorSpecOpts: none set → RuntimeDefault
// for a non-privileged container). Upstream, that is where the rule's
// statement stops holding: a deviation from the KEP on v1.27-v1.29
// kubelets.
func ephemeralOnTrailingKubelets(r Rule) Rule {
	r.KEPAt, r.APIServerWindow = Apiserver, aaFields
	r.Upstream = []Phase{
		phase("a kubelet before v1.30 reads only annotations, and none is synced for an ephemeral container", aaBeforeFields,
			Observation{Summary: "the ephemeral container runs under the runtime's default profile, whatever the pod's or its own field says",
				Admission: r.KEP[1].Obs.Admission, Container: &ContainerOutcome{State: Running, AppArmorProfile: RuntimeDefaultMarker, Effect: EffectAppArmorRuntimeDefault}}),
		phase("AppArmor fields", aaFields, r.KEP[1].Obs),
	}
	r.Source += "; a kubelet before v1.30: v1.29.15 pkg/kubelet/kuberuntime/security_context.go (ApparmorProfile from the annotation only) and containerd@v1.7.24 generateApparmorSpecOpts (no profile → the runtime default)"
	return r
}

// aaAnnotationToFieldRule builds a rule about the API server populating
// the container field from the annotation on pod creation: in the plan
// through Phases 1-2 and not in Phase 3; upstream still, Phase 3 not
// shipped. copied and notCopied are the summaries of what is stored with
// the copy and without.
func aaAnnotationToFieldRule(id, title, ref, source, copied, notCopied string) Rule {
	return Rule{
		ID: id, Title: title, KEPRef: ref, Component: Apiserver,
		KEPWindow: aaPhase12, UpstreamWindow: aaFields, Source: source,
		KEP: []Phase{
			aaBeforeFieldsPhase,
			phase("Phases 1-2: annotations copied to fields", aaPhase12, aaAnnAndField(copied)),
			phase("Phase 3: no annotation-to-field copy", aaPhase3, aaAnnNoField(notCopied)),
		},
		Upstream: []Phase{
			aaBeforeFieldsPhase,
			phase("annotations copied to fields (Phase 3 not shipped)", aaFields, aaAnnAndField(copied)),
		},
	}
}

// aaNoWarningPhase: no AppArmor warning exists before the fields.
var aaNoWarningPhase = phase("before AppArmor fields: no warning", aaBeforeFields,
	Observation{Summary: "annotation-only pod accepted without warning", Admission: Accepted, NoWarnings: true})

// aaWarned: an annotation-only pod accepted with the annotation warning.
func aaWarned(summary string) Observation {
	return Observation{Summary: summary, Admission: Accepted, Warnings: []string{AppArmorAnnotationWarning("", names.ContainerName)}}
}

// With the AppArmor gate disabled the API server drops the annotations
// (before the fields exist), then the fields and the annotations.
var (
	aaGateOffAnnotationsPhase = phase("gate disabled: annotations cleared", aaBeforeFields,
		Observation{Summary: "with --feature-gates=AppArmor=false the annotations are dropped", Admission: Accepted, AbsentAnnotations: []string{aaAnnKey}})
	aaGateOffFields = Observation{Summary: "with --feature-gates=AppArmor=false fields and annotations are dropped", Admission: Accepted,
		AbsentAnnotations: []string{aaAnnKey}, AbsentFields: []string{PodAppArmorType, ContainerAppArmorType}}
)

var (
	aaRuntimeProfileKEP = Observation{Summary: "pod not created", Admission: Rejected,
		MessageContains: []string{`Invalid value: "runtime/default-audit": must be a valid AppArmor profile`}}
	aaRuntimeProfileUp = Observation{Summary: "pod not created, but with another message", Admission: Rejected,
		MessageContains: []string{`invalid AppArmor profile name: "runtime/default-audit"`}}
	aaLocalhostInvalid = Observation{Summary: "pod not created", Admission: Rejected,
		MessageContains: []string{"must be set when AppArmor type is Localhost", "must not be padded with whitespace"}}
	aaRow5Blocked = Observation{Summary: "pod created; kubelet keeps it Pending (blocked), containers waiting \"Blocked\"",
		Container: &ContainerOutcome{State: Blocked, Reason: "AppArmor", MessageContains: aaNotEnabledMsg}}
	aaRow5Rejected = Observation{Summary: "pod created; kubelet admission rejects it (phase Failed, reason AppArmor)",
		Container: &ContainerOutcome{State: RejectedByKubelet, Reason: "AppArmor", MessageContains: aaNotEnabledMsg}}
)

var (
	aaEmptyRuns = Observation{Summary: "container runs with the runtime's default profile",
		Container: &ContainerOutcome{State: Running, AppArmorProfile: RuntimeDefaultMarker, Effect: EffectAppArmorRuntimeDefault}}
	aaStaticConfined = Observation{Summary: "static pod with annotation localhost/<p> runs confined by <p>", Container: &ContainerOutcome{State: Running, AppArmorProfile: aaEnforcedLocal, Effect: EffectAppArmorDenyWrite}}
	aaStaticBlocked  = Observation{Summary: "without AppArmor: the kubelet honours the annotation and blocks the static pod (row 5)", Container: aaRow5Blocked.Container}
)

// aaTemplate is what a Deployment whose template has a pod-level Localhost
// <p> field and the matching container annotation localhost/<p> shows:
// stored as sent (no container field added), with or without a warning.
func aaTemplate(warns bool, what string) Observation {
	o := Observation{Summary: "Deployment with pod-level Localhost <p> field and container annotation localhost/<p>: stored as sent, " + what, Admission: Accepted,
		Annotations: map[string]string{aaAnnKey: aaLocalhostAnn}, Fields: map[string]string{PodAppArmorType: "Localhost"}, AbsentFields: []string{ContainerAppArmorType}}
	if warns {
		o.Warnings = []string{AppArmorAnnotationWarning("spec.template.", names.ContainerName)}
	} else {
		o.NoWarnings = true
	}
	return o
}

func runtimeProfileInvalidRule(id, ref string, sameAs string) Rule {
	return Rule{
		ID: id, Title: "annotation runtime/default-audit rejected: must be a valid AppArmor profile",
		KEPRef: ref, Component: Apiserver, SameAs: sameAs,
		Source:   "pkg/apis/core/validation/validation.go: ValidateAppArmorPodAnnotations → ValidateAppArmorProfileFormat",
		KEP:      always("runtime profiles other than runtime/default rejected", aaRuntimeProfileKEP),
		Upstream: always("rejected with the message of ValidateAppArmorProfileFormat", aaRuntimeProfileUp),
	}
}

func localhostInvalidRule(id, ref, sameAs string) Rule {
	r := aaRule(id, "Localhost with empty, missing or whitespace-padded name rejected", ref, Apiserver, HostCondition{},
		"pkg/apis/core/validation/validation.go: ValidateAppArmorProfileField", true, aaLocalhostInvalid)
	r.SameAs = sameAs
	return r
}

var appArmorRules = []Rule{
	aaRule("apparmor/api/types", "Unconfined, RuntimeDefault, Localhost+localhostProfile accepted at pod and container level",
		appArmorKEP+" §Proposal › API › Pod API", Apiserver, HostCondition{},
		"pkg/apis/core/validation/validation.go: ValidateAppArmorProfileField", true,
		Observation{Summary: "accepted; appArmorProfile stored as sent", Admission: Accepted,
			Fields: map[string]string{PodAppArmorType: "RuntimeDefault", ContainerAppArmorType: "Localhost"}}),

	aaRule("apparmor/api/annotation-values", "only localhost/<p>, \"\", runtime/default, unconfined accepted as annotation values",
		appArmorKEP+" §Proposal › Validation", Apiserver, HostCondition{},
		"pkg/apis/core/validation/validation.go: ValidateAppArmorProfileFormat", false,
		Observation{Summary: "the four forms accepted; any other value rejected (text not fixed by the KEP; upstream text)", Admission: Rejected,
			MessageContains: []string{"invalid AppArmor profile name"}}),

	runtimeProfileInvalidRule("apparmor/api/runtime-profile-invalid",
		appArmorKEP+" §Failure and Fallback Strategy, row 4; §Version Skew Strategy › Runtime Profiles", ""),

	localhostInvalidRule("apparmor/api/localhost-invalid", appArmorKEP+" §Failure and Fallback Strategy, row 7; §Proposal › Validation (3)", ""),

	{
		ID: "apparmor/api/windows", Title: "field forbidden when spec.os.name is windows; annotations not copied",
		KEPRef: appArmorKEP + " §Proposal › Validation (2); §Version Skew Strategy › Pod Creation", Component: Apiserver,
		KEPWindow: aaFields, UpstreamWindow: aaFields,
		Source: "pkg/apis/core/validation/validation.go: validateWindows (\"cannot be set for a windows pod\"); pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew (returns early for windows)",
		KEP: []Phase{aaBeforeFieldsPhase, phase("AppArmor fields", aaFields, Observation{
			Summary: "field on a windows pod rejected; annotation on a windows pod stored without a field", Admission: Rejected,
			MessageContains: []string{"cannot be set for a windows pod"}, AbsentFields: []string{ContainerAppArmorType}})},
	},

	aaRule("apparmor/create/none", "nothing set: nothing added",
		appArmorKEP+" §Version Skew Strategy › Pod Creation", Apiserver, HostCondition{},
		"pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew", false,
		Observation{Summary: "accepted; neither field nor annotation added", Admission: Accepted, NoWarnings: true,
			AbsentAnnotations: []string{aaAnnKey}, AbsentFields: []string{PodAppArmorType, ContainerAppArmorType}}),

	{
		ID: "apparmor/create/field-to-annotation", Title: "field only: annotation added per container; pod-level field copied to each container without one",
		KEPRef: appArmorKEP + " §Version Skew Strategy › Pod Creation; §Removing annotation support (Phase 1, stops at Phase 2)", Component: Apiserver,
		KEPWindow: aaPhase1, UpstreamWindow: aaPhase1,
		Source: "pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew, appArmorAnnotationForField (v1.30.14…v1.33.13; gone in v1.34.4)",
		KEP: []Phase{
			aaBeforeFieldsPhase,
			phase("Phase 1: fields copied to annotations", aaPhase1, Observation{Summary: "pod-level Localhost field: annotation localhost/<p> added for the container", Admission: Accepted,
				Annotations: map[string]string{aaAnnKey: aaLocalhostAnn}, Fields: map[string]string{PodAppArmorType: "Localhost"}}),
			phase("Phase 2+: no field-to-annotation copy", aaPhase23, Observation{Summary: "field stored; no annotation added", Admission: Accepted,
				AbsentAnnotations: []string{aaAnnKey}, Fields: map[string]string{PodAppArmorType: "Localhost"}}),
		},
	},

	aaAnnotationToFieldRule("apparmor/create/annotation-to-field", "annotation only: field populated (until Phase 3)",
		appArmorKEP+" §Version Skew Strategy › Pod Creation; §Removing annotation support (Phase 3)",
		"pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew (annotation → field still in v1.37.2)",
		"container field Localhost populated from the annotation", "annotation stored; no field populated"),

	aaRule("apparmor/create/match", "field and annotation both set and equal: accepted",
		appArmorKEP+" §Proposal › Validation (1)", Apiserver, HostCondition{},
		"pkg/apis/core/validation/validation.go: validateAppArmorAnnotationsAndFieldsMatchOnCreate", true,
		aaAnnAndField("accepted; stored as sent")),

	aaRule("apparmor/create/mismatch", "field and annotation both set and different: rejected (all phases)",
		appArmorKEP+" §Proposal › Validation (1); §Removing annotation support (Phase 3: validation persists)", Apiserver, HostCondition{},
		"pkg/apis/core/validation/validation.go: validateAppArmorAnnotationsAndFieldsMatchOnCreate", true,
		Observation{Summary: "rejected, for a different type and for a different localhost profile (texts not fixed by the KEP; upstream texts)", Admission: Rejected,
			MessageContains: []string{"apparmor type in annotation and field must match", "apparmor profile in annotation and field must match"}}),

	{
		ID: "apparmor/create/empty-annotation", Title: "\"\" annotation: the runtime default profile is used",
		KEPRef:    appArmorKEP + " §Version Skew Strategy › Pod Creation; §Failure and Fallback Strategy, row 5 (host without AppArmor)",
		Component: Kubelet,
		Source: "pkg/security/apparmor/helpers.go: isRequired (an AppArmor annotation other than \"unconfined\", \"\" included, requires AppArmor), GetProfile " +
			"(\"\" gives no profile, so the runtime default applies); pkg/kubelet/kubelet.go: AppArmor admit handler soft to v1.30, hard from v1.31",
		KEP: []Phase{{Name: "\"\" means the runtime default", Window: release.Window{}, Obs: aaEmptyRuns, WithoutAppArmor: &aaRow5Blocked}},
		Upstream: []Phase{
			{Name: "runtime default; without AppArmor blocked (soft admission)", Window: win("", "1.31"), Obs: aaEmptyRuns, WithoutAppArmor: &aaRow5Blocked},
			{Name: "runtime default; without AppArmor rejected (hard admission)", Window: win("1.31", ""), Obs: aaEmptyRuns, WithoutAppArmor: &aaRow5Rejected},
		},
	},

	aaRule("apparmor/create/localhost-prefix", "the runtime receives the profile name without localhost/",
		appArmorKEP+" §Version Skew Strategy › Pod Creation", Kubelet, needAppArmor,
		"pkg/kubelet/kuberuntime/helpers.go: getAppArmorProfile (LocalhostRef is the bare name)", false,
		Observation{Summary: "/proc/1/attr/current shows the bare profile name", Container: &ContainerOutcome{State: Running, AppArmorProfile: aaEnforcedLocal, Effect: EffectAppArmorDenyWrite}}),

	{
		ID: "apparmor/create/warning", Title: "warn on annotation use without a corresponding field; exact text per version",
		KEPRef: appArmorKEP + " §Version Skew Strategy › Warnings; §Removing annotation support (Phases 1, 2)", Component: Apiserver,
		KEPWindow: aaFields, UpstreamWindow: aaFields,
		Source: "pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew (pod warning, same condition and text v1.30.14…v1.37.2)",
		KEP: []Phase{
			aaNoWarningPhase,
			phase("Phase 1: warn when only annotations", aaPhase1, aaWarned("annotation-only pod accepted with one warning (text not fixed by the KEP; upstream text)")),
			phase("Phase 2+: warn when no container field", aaPhase23, aaWarned("annotation-only pod accepted with one warning (text not fixed by the KEP; upstream text)")),
		},
		Upstream: []Phase{
			aaNoWarningPhase,
			phase("deprecated-since-v1.30 warning", aaFields, aaWarned("annotation-only pod accepted with one warning")),
		},
	},

	aaRule("apparmor/update/immutable", "field and annotation add, change, removal on a pod all rejected",
		appArmorKEP+" §Version Skew Strategy › Pod Update; §Proposal › Validation", Apiserver, HostCondition{},
		"pkg/apis/core/validation/validation.go: ValidatePodSpecificAnnotationUpdates, ValidatePodUpdate", false,
		Observation{Summary: "every such update rejected", Admission: Rejected,
			MessageContains: []string{"may not add AppArmor annotations", "may not remove or update AppArmor annotations", "pod updates may not change fields other than"}}),

	{
		ID: "apparmor/template/no-sync", Title: "templates and workloads stored as sent; warnings on create and update",
		KEPRef: appArmorKEP + " §Version Skew Strategy › PodTemplates, › Warnings; §Removing annotation support (Phases 1, 2)", Component: Apiserver,
		KEPWindow: aaPhase1, UpstreamWindow: aaFields,
		Source: "pkg/api/pod/warnings.go: warningsForPodSpecAndMeta (v1.30.14…v1.33.13: warns for a container annotation when neither the container nor the pod has a field, hasPodAppArmorProfile; " +
			"v1.34.4…v1.37.2: only when the annotation differs from the pod-level profile); pkg/apis/core/validation/validation.go: ValidatePodTemplateSpec " +
			"(validateAppArmorAnnotationsAndFieldsMatchOnCreate also on templates, so a container annotation differing from the pod-level field is rejected there)",
		KEP: []Phase{
			aaBeforeFieldsPhase,
			phase("Phase 1: warn only when no field at all", aaPhase1, aaTemplate(false, "no warning (a pod-level field is set)")),
			phase("Phase 2+: warn when no container field", aaPhase23, aaTemplate(true, "one warning (no container field)")),
		},
		Upstream: []Phase{
			aaBeforeFieldsPhase,
			phase("no warning for this template in any release (to v1.33: a pod-level field is set; from v1.34: the annotation equals the pod-level profile)", aaFields,
				aaTemplate(false, "no warning (a pod-level field that the annotation equals)")),
		},
	},

	aaAnnotationToFieldRule("apparmor/template/instantiation", "pods made from a template follow the creation rules",
		appArmorKEP+" §Version Skew Strategy › PodTemplates",
		"pkg/registry/core/pod/strategy.go: PrepareForCreate → applyAppArmorVersionSkew",
		"the ReplicaSet's pod (annotation only in template) gets the container field", "the ReplicaSet's pod keeps the annotation; no field"),

	ephemeralOnTrailingKubelets(aaRule("apparmor/ephemeral/inherit", "ephemeral container follows the pod-level profile",
		appArmorKEP+" §Version Skew Strategy › Pod Update (ephemeral containers)", Kubelet, needAppArmor,
		"pkg/security/apparmor/helpers.go: GetProfile (pod field when the container has none)", true,
		Observation{Summary: "pod-level Localhost: the ephemeral container runs confined by it", Container: &ContainerOutcome{State: Running, AppArmorProfile: aaEnforcedLocal, Effect: EffectAppArmorDenyWrite}})),

	ephemeralOnTrailingKubelets(aaRule("apparmor/ephemeral/override", "ephemeral container with its own field runs with it; no field/annotation match required for it",
		appArmorKEP+" §Version Skew Strategy › Pod Update; §Proposal › Validation (1, except ephemeral containers)", Kubelet, needAppArmor,
		"pkg/security/apparmor/helpers.go: GetProfile; pkg/apis/core/validation/validation.go: validateAppArmorAnnotationsAndFieldsMatchOnCreate (create only)", true,
		Observation{Summary: "ephemeral container with Unconfined under a Localhost pod: accepted and runs unconfined", Admission: Accepted,
			Container: &ContainerOutcome{State: Running, AppArmorProfile: "unconfined"}})),

	aaRule("apparmor/ephemeral/no-annotation-sync", "no annotation is synced for an ephemeral container",
		appArmorKEP+" §Version Skew Strategy › Pod Update (\"Ephemeral container's will never sync with an AppArmor annotation\")", Apiserver, HostCondition{},
		"pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew runs from PrepareForCreate only", true,
		Observation{Summary: "ephemeral container added with a field; no annotation for it", Admission: Accepted,
			AbsentAnnotations: []string{AppArmorAnnotation(names.EphemeralContainerName)}, Fields: map[string]string{EphemeralAppArmorType: "Unconfined"}}),

	{
		ID: "apparmor/static-pod/annotation-copy", Title: "kubelet honours a static pod's annotations as fields (Phases 1-2), not in Phase 3",
		KEPRef: appArmorKEP + " §Version Skew Strategy › Kubelet fallback; §Removing annotation support (Phase 3); §Failure and Fallback Strategy, rows 5-6 (host without AppArmor)", Component: Kubelet,
		KEPWindow: win("", "1.36"), UpstreamWindow: release.Window{},
		Source: "pkg/security/apparmor/helpers.go: GetProfile falls back to getProfileFromPodAnnotations and isRequired counts annotations (v1.30.14…v1.37.2); " +
			"pkg/kubelet/config/common.go: applyDefaults has no AppArmor copy; the mirror pod's field comes from pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew",
		KEP: []Phase{
			{Name: "annotations are the API", Window: aaBeforeFields, Obs: aaStaticConfined, WithoutAppArmor: &aaStaticBlocked},
			{Name: "Phases 1-2: kubelet copies static pod annotations", Window: aaPhase12, Obs: aaStaticConfined, WithoutAppArmor: &aaStaticBlocked},
			{Name: "Phase 3: static pod annotations ignored", Window: aaPhase3, Obs: Observation{Summary: "static pod with annotation localhost/<p> runs with the runtime default profile",
				Container: &ContainerOutcome{State: Running, AppArmorProfile: RuntimeDefaultMarker, Effect: EffectAppArmorRuntimeDefault}},
				WithoutAppArmor: &Observation{Summary: "without AppArmor: the annotation is ignored, the static pod runs unenforced (row 6)", Container: &ContainerOutcome{State: Running}}},
		},
		Upstream: []Phase{
			{Name: "annotations are the API", Window: aaBeforeFields, Obs: aaStaticConfined, WithoutAppArmor: &aaStaticBlocked},
			{Name: "kubelet reads static pod annotations; without AppArmor blocked (soft admission)", Window: win("1.30", "1.31"), Obs: aaStaticConfined, WithoutAppArmor: &aaStaticBlocked},
			{Name: "kubelet reads static pod annotations (Phase 3 not shipped); without AppArmor rejected (hard admission)", Window: win("1.31", ""), Obs: aaStaticConfined,
				WithoutAppArmor: &Observation{Summary: "without AppArmor: the kubelet honours the annotation and rejects the static pod (mirror pod Failed, reason AppArmor)",
					Container: aaRow5Rejected.Container}},
		},
	},

	{
		ID: "apparmor/feature-gate", Title: "with the AppArmor gate disabled (where it still can be), fields and annotations cleared",
		KEPRef: appArmorKEP + " §Version Skew Strategy › Pod Creation; §Feature enablement and rollback", Component: Apiserver,
		KEPWindow: aaFields, UpstreamWindow: win("1.30", "1.31"),
		Source: "pkg/api/pod/util.go: dropDisabledFields (AppArmor, AppArmorFields gates); pkg/features: gates GA and locked in v1.31, removed in v1.33",
		KEP: []Phase{
			aaGateOffAnnotationsPhase,
			phase("gate disabled: fields and annotations cleared", aaFields, aaGateOffFields),
		},
		Upstream: []Phase{
			aaGateOffAnnotationsPhase,
			phase("gate disabled: fields and annotations cleared", win("1.30", "1.31"), aaGateOffFields),
			phase("gate locked to true", win("1.31", "1.33"), na("the AppArmor gate is GA and locked to true: it cannot be disabled")),
			phase("gate removed", win("1.33", ""), na("the AppArmor gate no longer exists")),
		},
	},

	{
		ID: "apparmor/psa", Title: "Pod Security baseline and restricted forbid Unconfined (field and annotation), allow unset, RuntimeDefault, Localhost",
		KEPRef: appArmorKEP + " §Version Skew Strategy › Pod Security Admission", Component: Apiserver,
		KEPWindow: aaFields, UpstreamWindow: aaFields,
		Source: "k8s.io/pod-security-admission policy/check_appArmorProfile.go: appArmorProfile_1_0 (fields checked from v0.30)",
		KEP: []Phase{
			phase("annotations only", aaBeforeFields, Observation{Summary: "annotation unconfined rejected in baseline/restricted namespaces; others allowed", Admission: Rejected,
				MessageContains: []string{"forbidden AppArmor profile", aaAnnKey + `="unconfined"`}}),
			phase("fields and annotations", aaFields, Observation{Summary: "Unconfined field or annotation rejected in baseline/restricted namespaces; unset, RuntimeDefault, Localhost allowed",
				Admission: Rejected, MessageContains: []string{"forbidden AppArmor profile", `must not set AppArmor profile type to "Unconfined"`}}),
		},
	},

	{
		ID: "apparmor/node/ready-message", Title: "the node Ready condition message does not mention AppArmor",
		KEPRef: appArmorKEP + " §Proposal › Node Status", Component: Kubelet,
		KEPWindow: aaFields, UpstreamWindow: aaFields,
		Source: "pkg/kubelet/nodestatus/setters.go: ReadyCondition (\". AppArmor enabled\" appended in v1.29.6, gone in v1.30.14)",
		KEP: []Phase{
			{Name: "beta: AppArmor status in the Ready message", Window: aaBeforeFields,
				Obs:             Observation{Summary: "on an AppArmor host the Ready message ends with \". AppArmor enabled\"", ReadyMessageContains: "AppArmor enabled"},
				WithoutAppArmor: &Observation{Summary: "without AppArmor on the host the Ready message does not mention it", ReadyMessageExcludes: "AppArmor"}},
			phase("GA: no AppArmor in the Ready message", aaFields, Observation{Summary: "the Ready message does not mention AppArmor", ReadyMessageExcludes: "AppArmor"}),
		},
	},
}

// ruleTable is every rule in catalogue order. Rules whose plan and upstream
// behaviour are the same spell out only the plan. Each group's rules were
// read in the releases given with it (Rule.Read).
var ruleTable = buildRuleTable(
	ruleGroup{seccompRules, seccompRead},
	ruleGroup{appArmorRules, appArmorRead},
	ruleGroup{appArmorNodeRules, appArmorRead},
	ruleGroup{seccompContainerRules, seccompRead},
	ruleGroup{appArmorContainerRules, appArmorRead},
)

// ruleGroup is a family of rules and the releases their sources were read in.
type ruleGroup struct {
	rules []Rule
	read  SourcesRead
}

func buildRuleTable(groups ...ruleGroup) []Rule {
	var out []Rule
	for _, g := range groups {
		for _, r := range g.rules {
			if r.Upstream == nil {
				r.Upstream = r.KEP
				if r.UpstreamWindow == (release.Window{}) {
					r.UpstreamWindow = r.KEPWindow
				}
			}
			if r.Read == nil {
				r.Read = g.read
			}
			out = append(out, r)
		}
	}
	return out
}
