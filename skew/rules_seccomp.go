package skew

// Seccomp rules: KEP-135 (KEP-135 "Seccomp to GA").
//
// Upstream sources read (seccompRead): k8s.io/kubernetes v1.29.6, v1.30.14,
// v1.31.14, v1.32.13, v1.33.13, v1.34.4, v1.35.4, v1.36.3, v1.37.2. The
// upstream phases before v1.27 below rest on the warning text, not on the
// sources of those releases: there every rule answers skip, "not
// researched". Findings:
//   - pkg/registry/core/pod/strategy.go and pkg/api/pod/util.go hold no seccomp
//     field/annotation sync in any served release: the sync the KEP planned to
//     drop in v1.23 was dropped upstream in v1.27 (the warning text of
//     pkg/api/pod/warnings.go says "non-functional in v1.27+").
//   - pkg/kubelet/kuberuntime/helpers.go, getSeccompProfile: container field,
//     then pod field, then the kubelet default; the annotations parameter is
//     unused, so annotations are ignored by every served kubelet.
//   - pkg/apis/core/validation/validation.go: ValidateSeccompPodAnnotations /
//     ValidateSeccompProfile still reject invalid annotation values;
//     validateSeccompAnnotationsAndFields still rejects field/annotation
//     mismatches on create (ValidatePodCreate) and in pod templates
//     (ValidatePodTemplateSpec); validateSeccompProfileField and
//     validateLocalDescendingPath validate the field.

const seccompKEP = "KEP-135"

var (
	// KEP: "If this feature is implemented in v1.19, I propose v1.23 as a
	// target for removal of the old behavior" (§Upgrade / Downgrade).
	seccompKEPSyncWindow     = win("1.19", "1.23")
	seccompUpstreamSyncWin   = win("1.19", "1.27")
	seccompBeforeFields      = win("", "1.19")
	seccompFieldsOnwards     = win("1.19", "")
	seccompKEPAfterRemoval   = win("1.23", "")
	seccompUpstreamAfterSync = win("1.27", "")
	notYet                   = na("seccomp fields do not exist before v1.19")
	// seccompBeforeFieldsPhase is the first phase of every rule about the fields.
	seccompBeforeFieldsPhase = phase("before seccomp fields", seccompBeforeFields, notYet)
)

var seccompPodAnnKey = SeccompPodAnnotation
var seccompCtrAnnKey = SeccompContainerAnnotationPrefix + ContainerName

func seccompFieldRule(id, title, ref, source string, o Observation) Rule {
	return Rule{
		ID: id, Title: title, KEPRef: ref, Component: Apiserver,
		KEPWindow: seccompFieldsOnwards, UpstreamWindow: seccompFieldsOnwards, Source: source,
		KEP:      []Phase{seccompBeforeFieldsPhase, phase("seccomp GA", seccompFieldsOnwards, o)},
		Upstream: []Phase{seccompBeforeFieldsPhase, phase("seccomp GA", seccompFieldsOnwards, o)},
	}
}

func seccompKubeletRule(id, title, ref, source string, host HostCondition, o Observation) Rule {
	r := seccompFieldRule(id, title, ref, source, o)
	r.Component = Kubelet
	r.Host = host
	return r
}

var seccompRules = []Rule{
	seccompFieldRule("seccomp/api/types",
		"Unconfined, RuntimeDefault, Localhost+localhostProfile accepted at pod and container level",
		seccompKEP+" §Proposal › API › Pod API",
		"pkg/apis/core/validation/validation.go: validateSeccompProfileField, validateSeccompProfileType",
		Observation{Summary: "accepted; seccompProfile stored as sent at pod and container level", Admission: Accepted,
			Fields: map[string]string{PodSeccompType: "RuntimeDefault", ContainerSeccompType: "Localhost"}}),

	seccompFieldRule("seccomp/api/localhost-profile-required",
		"Localhost without localhostProfile rejected; localhostProfile with another type rejected",
		seccompKEP+" §Proposal › API › Pod API (SeccompProfile union)",
		"pkg/apis/core/validation/validation.go: validateSeccompProfileField",
		Observation{Summary: "rejected", Admission: Rejected,
			MessageContains: []string{"must be set when seccomp type is Localhost", "can only be set when seccomp type is Localhost"}}),

	seccompFieldRule("seccomp/api/localhost-path-invalid",
		"absolute or descending localhostProfile (/etc/x.json, ../x.json) rejected",
		seccompKEP+" §Failure and Fallback Strategy, row 6",
		"pkg/apis/core/validation/validation.go: validateSeccompProfileField → validateLocalDescendingPath, validatePathNoBacksteps",
		Observation{Summary: "pod not created", Admission: Rejected,
			MessageContains: []string{"must be a relative path", "must not contain '..'"}}),

	{
		ID: "seccomp/api/runtime-profile-invalid", Title: "annotation runtime/default-audit rejected",
		KEPRef: seccompKEP + " §Failure and Fallback Strategy, row 5; §Version Skew Strategy › Runtime Profiles", Component: Apiserver,
		KEPWindow: Window{}, UpstreamWindow: Window{},
		Source: "pkg/apis/core/validation/validation.go: ValidateSeccompPodAnnotations → ValidateSeccompProfile",
		KEP: always("runtime profiles other than runtime/default rejected", Observation{Summary: "pod not created", Admission: Rejected,
			MessageContains: []string{`Invalid value: "runtime/default-audit": must be a valid seccomp profile`}}),
		Upstream: always("runtime profiles other than runtime/default rejected", Observation{Summary: "pod not created", Admission: Rejected,
			MessageContains: []string{`Invalid value: "runtime/default-audit": must be a valid seccomp profile`}}),
	},

	seccompFieldRule("seccomp/create/none",
		"nothing set: no field, no annotation added",
		seccompKEP+" §Version Skew Strategy › Pod Creation",
		"pkg/registry/core/pod/strategy.go: PrepareForCreate (no seccomp handling)",
		Observation{Summary: "accepted; neither field nor annotation added", Admission: Accepted, NoWarnings: true,
			AbsentAnnotations: []string{seccompPodAnnKey, seccompCtrAnnKey}, AbsentFields: []string{PodSeccompType, ContainerSeccompType}}),

	{
		ID: "seccomp/create/field-to-annotation", Title: "field only: annotation added (pod and container)",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Pod Creation",
		Component: Apiserver, KEPWindow: seccompKEPSyncWindow, UpstreamWindow: seccompUpstreamSyncWin,
		Source: "pkg/registry/core/pod/strategy.go (no seccomp sync in v1.29.6…v1.37.2); removal version from pkg/api/pod/warnings.go \"non-functional in v1.27+\"",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("field/annotation sync", seccompKEPSyncWindow, Observation{Summary: "annotations added from the fields", Admission: Accepted,
				Annotations: map[string]string{seccompPodAnnKey: "runtime/default", seccompCtrAnnKey: "localhost/" + SeccompLocalhostProfile}}),
			phase("annotation support removed (v1.23)", seccompKEPAfterRemoval, Observation{Summary: "fields stored as sent; no annotation added", Admission: Accepted,
				AbsentAnnotations: []string{seccompPodAnnKey, seccompCtrAnnKey}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase("field/annotation sync", seccompUpstreamSyncWin, Observation{Summary: "annotations added from the fields", Admission: Accepted,
				Annotations: map[string]string{seccompPodAnnKey: "runtime/default", seccompCtrAnnKey: "localhost/" + SeccompLocalhostProfile}}),
			phase("annotation support removed (v1.27)", seccompUpstreamAfterSync, Observation{Summary: "fields stored as sent; no annotation added", Admission: Accepted,
				AbsentAnnotations: []string{seccompPodAnnKey, seccompCtrAnnKey}}),
		},
	},

	{
		ID: "seccomp/create/annotation-to-field", Title: "annotation only: field populated (unconfined, runtime/default, docker/default, localhost/<p>)",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Pod Creation",
		Component: Apiserver, KEPWindow: seccompKEPSyncWindow, UpstreamWindow: seccompUpstreamSyncWin,
		Source: "pkg/registry/core/pod/strategy.go (no seccomp sync in v1.29.6…v1.37.2); pkg/api/pod/warnings.go \"non-functional in v1.27+\"",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("field/annotation sync", seccompKEPSyncWindow, Observation{Summary: "fields populated from the annotations (docker/default → RuntimeDefault)", Admission: Accepted,
				Fields: map[string]string{PodSeccompType: "RuntimeDefault", ContainerSeccompType: "Localhost"}}),
			phase("annotation support removed (v1.23)", seccompKEPAfterRemoval, Observation{Summary: "annotations stored as sent; no field populated", Admission: Accepted,
				Annotations: map[string]string{seccompPodAnnKey: "runtime/default", seccompCtrAnnKey: "localhost/" + SeccompLocalhostProfile}, AbsentFields: []string{PodSeccompType, ContainerSeccompType}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase("field/annotation sync", seccompUpstreamSyncWin, Observation{Summary: "fields populated from the annotations (docker/default → RuntimeDefault)", Admission: Accepted,
				Fields: map[string]string{PodSeccompType: "RuntimeDefault", ContainerSeccompType: "Localhost"}}),
			phase("annotation support removed (v1.27)", seccompUpstreamAfterSync, Observation{Summary: "annotations stored as sent; no field populated", Admission: Accepted,
				Annotations: map[string]string{seccompPodAnnKey: "runtime/default", seccompCtrAnnKey: "localhost/" + SeccompLocalhostProfile}, AbsentFields: []string{PodSeccompType, ContainerSeccompType}}),
		},
	},

	seccompFieldRule("seccomp/create/match",
		"field and annotation both set and equal: accepted",
		seccompKEP+" §Version Skew Strategy › Pod Creation",
		"pkg/apis/core/validation/validation.go: ValidatePodCreate → validateSeccompAnnotationsAndFields",
		Observation{Summary: "accepted; field and annotation stored as sent", Admission: Accepted,
			Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, Fields: map[string]string{PodSeccompType: "RuntimeDefault"}}),

	seccompFieldRule("seccomp/create/mismatch",
		"field and annotation both set and different: rejected",
		seccompKEP+" §Version Skew Strategy › Pod Creation (\"the values MUST match\")",
		"pkg/apis/core/validation/validation.go: validateSeccompAnnotationsAndFieldsMatch",
		Observation{Summary: "rejected", Admission: Rejected, MessageContains: []string{"seccomp type in annotation and field must match"}}),

	{
		ID: "seccomp/create/warning", Title: "annotation use warns; exact text per version",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Pod Creation (warning mechanism)",
		Component: Apiserver, KEPWindow: seccompFieldsOnwards, UpstreamWindow: seccompUpstreamAfterSync,
		Source: "pkg/api/pod/warnings.go: warningsForPodSpecAndMeta (\"non-functional in v1.27+\" text verified in v1.29.6…v1.37.2)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("annotation use warned; support ends in v1.23", seccompFieldsOnwards, Observation{Summary: "accepted with a warning about the annotations' use (mechanism and text not fixed by the KEP)", Admission: Accepted,
				WarningContains: []string{seccompPodAnnKey, seccompCtrAnnKey}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			unresearched("warning text of v1.19-v1.26 (not researched: sources not served)", win("1.19", "1.27"), na("warning text of v1.19-v1.26 not researched: those sources are not served")),
			phase("non-functional-in-v1.27+ warning", seccompUpstreamAfterSync, Observation{Summary: "accepted with one warning per annotation without a field", Admission: Accepted,
				Warnings: []string{SeccompAnnotationWarning("", seccompPodAnnKey), SeccompAnnotationWarning("", seccompCtrAnnKey)}}),
		},
	},

	seccompFieldRule("seccomp/update/field-immutable",
		"changing the seccomp field of a pod rejected",
		seccompKEP+" §Version Skew Strategy › Pod Update",
		"pkg/apis/core/validation/validation.go: ValidatePodUpdate (pod spec updates restricted)",
		Observation{Summary: "update rejected", Admission: Rejected, MessageContains: []string{"pod updates may not change fields other than"}}),

	{
		ID: "seccomp/update/annotation-ignored", Title: "annotation update accepted and never changes the profile a restarted container runs with",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Pod Update",
		Component: Kubelet, KEPWindow: seccompFieldsOnwards, UpstreamWindow: seccompFieldsOnwards, Host: needSeccomp,
		Source: "pkg/apis/core/validation/validation.go: ValidatePodSpecificAnnotationUpdates (seccomp annotations mutable, values validated); pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile (annotations unused)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("annotation updates ignored", seccompFieldsOnwards, Observation{Summary: "update accepted; after a restart the container still runs with the field's profile (RuntimeDefault)",
				Admission: Accepted, Container: &ContainerOutcome{State: Running, SeccompMode: intp(2)}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase("annotation updates ignored", seccompFieldsOnwards, Observation{Summary: "update accepted; after a restart the container still runs with the field's profile (RuntimeDefault)",
				Admission: Accepted, Container: &ContainerOutcome{State: Running, SeccompMode: intp(2)}}),
		},
	},

	{
		ID: "seccomp/template/no-sync", Title: "PodTemplate and workloads stored as sent; warnings",
		KEPRef:    seccompKEP + " §Version Skew Strategy › PodTemplates",
		Component: Apiserver, KEPWindow: seccompFieldsOnwards, UpstreamWindow: seccompUpstreamAfterSync,
		Source: "pkg/api/pod/warnings.go: GetWarningsForPodTemplate → warningsForPodSpecAndMeta; pkg/apis/core/validation/validation.go: ValidatePodTemplateSpec (also rejects field/annotation mismatch)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("templates ignored; warning that support ends in v1.23", seccompFieldsOnwards, Observation{Summary: "Deployment stored as sent (annotation only, no field); warned about the annotation's use (mechanism and text not fixed by the KEP)",
				Admission: Accepted, Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, AbsentFields: []string{PodSeccompType},
				WarningContains: []string{seccompPodAnnKey}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			unresearched("warning text of v1.19-v1.26 (not researched: sources not served)", win("1.19", "1.27"), na("warning text of v1.19-v1.26 not researched: those sources are not served")),
			phase("templates ignored; non-functional-in-v1.27+ warning", seccompUpstreamAfterSync, Observation{Summary: "Deployment stored as sent (annotation only, no field); warning per annotation",
				Admission: Accepted, Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, AbsentFields: []string{PodSeccompType},
				Warnings: []string{SeccompAnnotationWarning("spec.template.", seccompPodAnnKey)}}),
		},
	},

	{
		ID: "seccomp/template/instantiation", Title: "pods made from a template follow the creation rules",
		KEPRef:    seccompKEP + " §Version Skew Strategy › PodTemplates (\"resolution will happen on template instantiation\")",
		Component: Apiserver, KEPWindow: seccompKEPSyncWindow, UpstreamWindow: seccompUpstreamSyncWin,
		Source: "pkg/registry/core/pod/strategy.go: PrepareForCreate (same path as any pod create)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("field/annotation sync", seccompKEPSyncWindow, Observation{Summary: "the ReplicaSet's pod (annotation only in template) gets the field", Admission: Accepted,
				Fields: map[string]string{PodSeccompType: "RuntimeDefault"}}),
			phase("annotation support removed (v1.23)", seccompKEPAfterRemoval, Observation{Summary: "the ReplicaSet's pod keeps the annotation; no field populated", Admission: Accepted,
				Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, AbsentFields: []string{PodSeccompType}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase("field/annotation sync", seccompUpstreamSyncWin, Observation{Summary: "the ReplicaSet's pod (annotation only in template) gets the field", Admission: Accepted,
				Fields: map[string]string{PodSeccompType: "RuntimeDefault"}}),
			phase("annotation support removed (v1.27)", seccompUpstreamAfterSync, Observation{Summary: "the ReplicaSet's pod keeps the annotation; no field populated", Admission: Accepted,
				Annotations: map[string]string{seccompPodAnnKey: "runtime/default"}, AbsentFields: []string{PodSeccompType}}),
		},
	},

	seccompKubeletRule("seccomp/ephemeral/inherit",
		"ephemeral container without a profile runs with the pod's",
		seccompKEP+" §Version Skew Strategy › Pod Update (ephemeral containers)",
		"pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile (pod field when the container has none)", needSeccomp,
		Observation{Summary: "pod field RuntimeDefault: the ephemeral container runs with Seccomp: 2",
			Container: &ContainerOutcome{State: Running, SeccompMode: intp(2)}}),

	seccompKubeletRule("seccomp/ephemeral/override",
		"ephemeral container with its own field runs with it",
		seccompKEP+" §Version Skew Strategy › Pod Update (ephemeral containers)",
		"pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile (container field first)", needSeccomp,
		Observation{Summary: "pod RuntimeDefault, ephemeral container Unconfined: it runs with Seccomp: 0",
			Container: &ContainerOutcome{State: Running, SeccompMode: intp(0)}}),

	seccompFieldRule("seccomp/ephemeral/no-annotation-sync",
		"no annotation is synced for an ephemeral container",
		seccompKEP+" §Version Skew Strategy › Pod Update (\"Ephemeral container's will never sync with a seccomp annotation\")",
		"pkg/registry/core/pod/strategy.go: podEphemeralContainersStrategy (no seccomp handling)",
		Observation{Summary: "ephemeral container added; no annotation for it", Admission: Accepted,
			AbsentAnnotations: []string{SeccompContainerAnnotation(EphemeralContainerName)}, Fields: map[string]string{EphemeralSeccompType: "Unconfined"}}),

	{
		ID: "seccomp/kubelet/precedence", Title: "container field > container annotation > pod field > pod annotation, as the kubelet honours annotations",
		KEPRef:    seccompKEP + " §Version Skew Strategy › Kubelet Backwards compatibility",
		Component: Kubelet, KEPWindow: seccompKEPSyncWindow, UpstreamWindow: win("1.19", "1.27"), Host: needSeccomp,
		Source: "pkg/kubelet/kuberuntime/helpers.go: getSeccompProfile (v1.29.6…v1.37.2: container field, pod field, default; annotations unused)",
		KEP: []Phase{
			seccompBeforeFieldsPhase,
			phase("fields and annotations honoured", seccompKEPSyncWindow, Observation{Summary: "pod field RuntimeDefault + container annotation unconfined: container annotation wins (Seccomp: 0)",
				Container: &ContainerOutcome{State: Running, SeccompMode: intp(0)}}),
			phase("fields only (annotations removed v1.23)", seccompKEPAfterRemoval, Observation{Summary: "pod field RuntimeDefault + container annotation unconfined: annotation ignored, pod field applies (Seccomp: 2)",
				Container: &ContainerOutcome{State: Running, SeccompMode: intp(2)}}),
		},
		Upstream: []Phase{
			seccompBeforeFieldsPhase,
			phase("fields and annotations honoured", win("1.19", "1.27"), Observation{Summary: "pod field RuntimeDefault + container annotation unconfined: container annotation wins (Seccomp: 0)",
				Container: &ContainerOutcome{State: Running, SeccompMode: intp(0)}}),
			phase("fields only (annotations removed v1.27)", seccompUpstreamAfterSync, Observation{Summary: "pod field RuntimeDefault + container annotation unconfined: annotation ignored, pod field applies (Seccomp: 2)",
				Container: &ContainerOutcome{State: Running, SeccompMode: intp(2)}}),
		},
	},

	seccompKubeletRule("seccomp/kubelet/enforce",
		"RuntimeDefault gives Seccomp: 2, Unconfined 0; a syscall the runtime default blocks fails",
		seccompKEP+" §Proposal › RuntimeProfile",
		"pkg/kubelet/kuberuntime/helpers.go: fieldSeccompProfile", needSeccomp,
		Observation{Summary: "RuntimeDefault container runs with Seccomp: 2 and a blocked syscall (e.g. unshare of a user namespace) fails; Unconfined runs with Seccomp: 0",
			Cases: []ContainerOutcome{
				{Case: CaseRuntimeDefault, State: Running, SeccompMode: intp(2), Note: "a syscall the runtime default blocks fails"},
				{Case: CaseUnconfined, State: Running, SeccompMode: intp(0)},
			}}),

	seccompKubeletRule("seccomp/kubelet/localhost",
		"localhost profile under <root-dir>/seccomp denying one syscall: EPERM for it, the rest works",
		seccompKEP+" §Seccomp root path configuration; §LocalhostProfile",
		"pkg/kubelet/kuberuntime/helpers.go: fieldSeccompProfile (filepath.Join(seccompProfileRoot, localhostProfile))", needSeccomp,
		Observation{Summary: "container runs with Seccomp: 2; mkdir fails with EPERM, other syscalls work",
			Container: &ContainerOutcome{State: Running, SeccompMode: intp(2), Note: "mkdir fails with EPERM"}}),

	seccompKubeletRule("seccomp/failure/row-1",
		"runtime without seccomp support: one of the two allowed outcomes, reported",
		seccompKEP+" §Failure and Fallback Strategy, row 1",
		"runtime dependent (the kubelet passes the profile through CRI)", HostCondition{},
		Observation{Summary: "pod created; the container either fails to start or runs without enforcement",
			Admission: Accepted,
			AnyOf: []ContainerOutcome{
				{State: Waiting, Reason: "CreateContainerError|RunContainerError|CrashLoopBackOff", Note: "fails to start"},
				{State: Running, SeccompMode: intp(0), Note: "runs without its policy enforced"},
			}}),

	seccompRow2(),

	seccompKubeletRule("seccomp/failure/row-3",
		"profile with an unsupported or invalid action: fails to start, retried with back-off",
		seccompKEP+" §Failure and Fallback Strategy, row 3",
		"runtime dependent (containerd/runc reject the profile when creating the container)", needSeccomp,
		Observation{Summary: "pod created; container fails to start and is retried with back-off per restartPolicy",
			Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError|RunContainerError|CrashLoopBackOff"}}),

	seccompKubeletRule("seccomp/failure/row-4",
		"profile file missing on the node: fails to start, retried; runs on a node that has it",
		seccompKEP+" §Failure and Fallback Strategy, row 4",
		"pkg/kubelet/kuberuntime/helpers.go: fieldSeccompProfile passes the path; the runtime fails to read it", needSeccomp,
		Observation{Summary: "pod created; container fails to start and is retried; the same pod runs on a node with the file",
			Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError", MessageContains: SeccompMissingProfilePrefix}}),
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
		{Case: CaseDenyMkdir, State: Running, SeccompMode: intp(2), Note: "mkdir denied: fails with EPERM"},
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
