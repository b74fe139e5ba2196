package skew

import "github.com/skewproof/skewproof/fixtures/names"

// Rules about every kind of container of a pod: init containers, sidecars
// (restartable init containers) and a second regular container. KEP-135
// and KEP-24 give the pod-level field to "the containers in this pod" and
// let a container-level field override it for its container; neither
// singles out a kind of container. KEP-24 adds the default for privileged
// containers.
//
// Upstream sources read (seccompRead for the seccomp rules, appArmorRead
// for the AppArmor ones): in every release read, pkg/kubelet/kuberuntime/
// kuberuntime_manager.go SyncPod starts init containers (restartable or
// not) and regular containers through the same startContainer
// (kuberuntime_container.go) → generateContainerConfig →
// kuberuntime_container_linux.go generateLinuxContainerConfig →
// security_context.go determineEffectiveSecurityContext, which calls, per
// container, helpers.go getSeccompProfile(pod.Annotations, container.Name,
// pod.Spec.SecurityContext, container.SecurityContext, …) (the container
// field first, then the pod field) and, for AppArmor,
// apparmor.GetProfileNameFromPodAnnotations (v1.19.16…v1.29.6: the
// container's annotation, which the API server v1.30-v1.33 copies from the
// pod field to every container without one: pkg/registry/core/pod/
// strategy.go applyAppArmorVersionSkew, podutil.VisitContainers with
// AllFeatureEnabledContainers) or helpers.go getAppArmorProfile →
// pkg/security/apparmor/helpers.go GetProfile (v1.30.14…v1.37.2: container
// field, container annotation, pod field). Restartable init containers:
// pkg/features/kube_features.go SidecarContainers, alpha and off in
// v1.28.15, beta and on from v1.29.6, GA from v1.33 and gone by v1.37.2.
//
// A privileged container without a profile: the kubelet sends no AppArmor
// profile (getAppArmorProfile returns nil; v1.29.6 sends ""), and the
// runtimes read give it none: containerd@v1.7.24 pkg/cri/server/
// container_create_linux.go generateApparmorSpecOpts and
// containerd/v2@v2.4.2 internal/cri/sputil/apparmor_linux.go
// GenerateApparmorSpecOpts (no profile → RuntimeDefault, which "Do not set
// apparmor profile when container is privileged"); cri-o@v1.34.0
// server/container_create_linux.go specSetApparmorProfile (applies a
// profile only to a non-privileged container).

// The sub-cases (Observation.Cases) of the scenarios with several
// containers, named after the containers (fixtures/names) they judge.
const (
	// CaseInit .. CasePrivileged name the sub-cases, after the container
	// each one judges: a container that inherits the pod-level profile,
	// one with its own (which overrides it), and a privileged container
	// without a profile.
	CaseInit       = names.InitContainerName
	CaseInitOwn    = names.InitOwnContainerName
	CaseSidecar    = names.SidecarContainerName
	CaseSidecarOwn = names.SidecarOwnContainerName
	CaseSecond     = names.SecondContainerName
	CaseOwn        = names.ContainerName
	CasePrivileged = "privileged"
)

// containersSource is the kubelet path every container kind takes, cited
// by each rule of this file.
const containersSource = "pkg/kubelet/kuberuntime/kuberuntime_manager.go: SyncPod starts init containers, sidecars and containers through startContainer → " +
	"generateContainerConfig → kuberuntime_container_linux.go generateLinuxContainerConfig → security_context.go determineEffectiveSecurityContext, per container"

var (
	// Sidecars exist from v1.29 (SidecarContainers on by default). A
	// kubelet of v1.29 or later never runs under an older API server
	// (skew policy), so the kubelet's version decides.
	sidecarsOnward = win("1.29", "")
	noSidecars     = na("restartable init containers (sidecars) are alpha and off by default (SidecarContainers feature gate) before v1.29")

	// seccompPodDenyMkdir: a container that runs with the pod's Localhost
	// profile (it denies mkdir).
	seccompPodDenyMkdir = func(c string) ContainerOutcome {
		return ContainerOutcome{Case: c, State: Running, SeccompMode: intp(2), Effect: EffectSeccompDenyMkdir, Note: "mkdir fails with EPERM: the pod's Localhost profile"}
	}
	// seccompOwnUnconfined: a container with its own Unconfined field.
	seccompOwnUnconfined = func(c string) ContainerOutcome {
		return ContainerOutcome{Case: c, State: Running, SeccompMode: intp(0), Note: "mkdir works: its own Unconfined, not the pod's profile"}
	}
	// aaPodDenyWrite: a container confined by the pod's Localhost profile.
	aaPodDenyWrite = func(c string) ContainerOutcome {
		return ContainerOutcome{Case: c, State: Running, AppArmorProfile: aaEnforcedLocal, Effect: EffectAppArmorDenyWrite, Note: "a write fails with EACCES: the pod's Localhost profile"}
	}
)

// seccompContainersRule is a seccomp kubelet rule about several
// containers: not applicable before the fields exist (and, with sidecars,
// before sidecars do), o from then on, in plan and upstream alike.
func seccompContainersRule(id, title, source string, sidecars bool, o Observation) Rule {
	r := seccompKubeletRule(id, title,
		seccompKEP+" §Proposal › API › Pod API (the pod-level field: \"The seccomp options to use by the containers in this pod\"; "+
			"container options override the pod options)", containersSource+"; "+source, needSeccomp, o)
	if sidecars {
		r.KEPWindow, r.UpstreamWindow = sidecarsOnward, sidecarsOnward
		r.KEP = []Phase{seccompBeforeFieldsPhase, phase("no sidecars", win("1.19", "1.29"), noSidecars), phase("seccomp GA, sidecars on", sidecarsOnward, o)}
		r.Upstream = r.KEP
	}
	return r
}

// appArmorContainersRule is an AppArmor kubelet rule about several
// containers with the pod-level field: not applicable before the fields
// exist (v1.30, after sidecars), o from then on, in plan and upstream
// alike.
func appArmorContainersRule(id, title, source string, o Observation) Rule {
	return trailingKubeletsEnforce(aaRule(id, title,
		appArmorKEP+" §Proposal › API (the pod-level field: \"The AppArmor options to use by the containers in this pod\"; "+
			"container-level options override the pod options)", Kubelet, needAppArmor, containersSource+"; "+source, true, o))
}

// trailingKubeletsEnforce makes an AppArmor kubelet rule about the fields
// hold wherever the API server has them, whatever the kubelet: "If only
// AppArmor fields are specified, add the corresponding annotations. If
// these are specified at the Pod level, copy the annotations to each
// container that does not have annotations already specified. This
// ensures that the fields are enforced even if the node version trails
// the API version" (KEP-24 §Version Skew Strategy › Pod Creation). The
// v1.30-v1.33 API servers do so for every container, init containers and
// sidecars included (pkg/registry/core/pod/strategy.go,
// applyAppArmorVersionSkew, VisitContainers with
// AllFeatureEnabledContainers, v1.30.14), and a kubelet before v1.30
// reads the annotation alone (v1.29.15 pkg/security/apparmor/helpers.go
// GetProfileName); from v1.34, which copies no more, the skew policy
// allows only kubelets that read the fields. Observed on a 1.30.14 API
// server with a 1.29.15 kubelet (the history preset), which the oracle
// had skipped as "the fields do not exist before v1.30".
func trailingKubeletsEnforce(r Rule) Rule {
	r.UpstreamAt, r.KEPAt = Apiserver, Apiserver
	r.KEPRef += "; §Version Skew Strategy › Pod Creation (the fields enforced on a trailing kubelet)"
	r.Source += "; on a kubelet before v1.30 through the annotations the API server adds (pkg/registry/core/pod/strategy.go applyAppArmorVersionSkew, v1.30.14…v1.33.13; v1.29.15 pkg/security/apparmor/helpers.go GetProfileName reads the annotation)"
	return r
}

var seccompContainerRules = []Rule{
	seccompContainersRule("seccomp/kubelet/init-containers",
		"pod-level Localhost profile in force in an init container; an init container's own profile overrides it",
		"helpers.go getSeccompProfile (container field, else pod field; v1.20.15…v1.37.2; v1.19.16 the CRI SeccompProfilePath from the same fields)", false,
		Observation{Summary: "pod Localhost deny-mkdir: the init container without a profile has mkdir denied (EPERM); the init container with its own Unconfined runs without a filter",
			Cases: []ContainerOutcome{seccompPodDenyMkdir(CaseInit), seccompOwnUnconfined(CaseInitOwn)}}),

	seccompContainersRule("seccomp/kubelet/sidecar",
		"a sidecar (restartable init container) runs with the pod-level profile, or its own",
		"helpers.go getSeccompProfile (v1.29.6…v1.37.2); pkg/features/kube_features.go SidecarContainers (off by default in v1.28.15, on from v1.29.6)", true,
		Observation{Summary: "pod Localhost deny-mkdir: the sidecar without a profile has mkdir denied (EPERM); the sidecar with its own Unconfined runs without a filter",
			Cases: []ContainerOutcome{seccompPodDenyMkdir(CaseSidecar), seccompOwnUnconfined(CaseSidecarOwn)}}),

	seccompContainersRule("seccomp/kubelet/second-container",
		"a second container gets the pod-level profile; one container's own profile does not leak to the other",
		"helpers.go getSeccompProfile (v1.20.15…v1.37.2; v1.19.16 the CRI SeccompProfilePath from the same fields)", false,
		Observation{Summary: "pod Localhost deny-mkdir, container app Unconfined: app runs without a filter (mkdir works), container second has mkdir denied (EPERM)",
			Cases: []ContainerOutcome{seccompOwnUnconfined(CaseOwn), seccompPodDenyMkdir(CaseSecond)}}),
}

var appArmorContainerRules = []Rule{
	appArmorContainersRule("apparmor/kubelet/init-containers",
		"pod-level Localhost profile enforced in an init container",
		"pkg/kubelet/kuberuntime/helpers.go getAppArmorProfile → pkg/security/apparmor/helpers.go GetProfile (pod field for a container without its own; v1.30.14…v1.37.2)",
		Observation{Summary: "pod Localhost deny-write: the init container runs confined by it, a write fails with EACCES",
			Cases: []ContainerOutcome{aaPodDenyWrite(CaseInit)}}),

	appArmorContainersRule("apparmor/kubelet/sidecar",
		"a sidecar (restartable init container) is confined by the pod-level profile",
		"pkg/kubelet/kuberuntime/helpers.go getAppArmorProfile → pkg/security/apparmor/helpers.go GetProfile (v1.30.14…v1.37.2); "+
			"pkg/features/kube_features.go SidecarContainers (on by default from v1.29.6)",
		Observation{Summary: "pod Localhost deny-write: the sidecar runs confined by it, a write fails with EACCES",
			Cases: []ContainerOutcome{aaPodDenyWrite(CaseSidecar)}}),

	appArmorContainersRule("apparmor/kubelet/second-container",
		"a second container is confined by the pod-level profile; a container-level override stays on its container",
		"pkg/kubelet/kuberuntime/helpers.go getAppArmorProfile → pkg/security/apparmor/helpers.go GetProfile (container field first; v1.30.14…v1.37.2)",
		Observation{Summary: "pod Localhost deny-write, container app Unconfined: app runs unconfined (a write works), container second is confined (EACCES)",
			Cases: []ContainerOutcome{
				{Case: CaseOwn, State: Running, AppArmorProfile: "unconfined", Note: "a write works: its own Unconfined, not the pod's profile"},
				aaPodDenyWrite(CaseSecond),
			}}),

	aaRule("apparmor/kubelet/privileged-default", "a privileged container without a profile runs unconfined, a non-privileged one under the runtime default",
		appArmorKEP+" §Proposal › API › Pod Annotations (beta API): \"unconfined - Run without any AppArmor profile. This is the default for privileged pods\"; "+
			"runtime/default: \"containerd and CRI-O will run non-privileged containers with this profile by default\"", Kubelet, needAppArmor,
		"pkg/kubelet/kuberuntime/helpers.go getAppArmorProfile (no profile: nil, v1.30.14…v1.37.2; v1.29.6 sends \"\"); "+
			"containerd@v1.7.24 pkg/cri/server/container_create_linux.go generateApparmorSpecOpts and containerd/v2@v2.4.2 internal/cri/sputil/apparmor_linux.go "+
			"GenerateApparmorSpecOpts (none set → RuntimeDefault; privileged → no profile); cri-o@v1.34.0 server/container_create_linux.go specSetApparmorProfile "+
			"(profiles only for non-privileged containers); the runtime default denies writes to the files directly in /proc (\"deny @{PROC}/* w\": "+
			"containerd@v1.7.24 and containerd/v2@v2.4.2 contrib/apparmor/template.go; containers/common@v0.63.0 pkg/apparmor/apparmor_linux_template.go, CRI-O's)", false,
		Observation{Summary: "no profile set: the privileged container runs unconfined; the non-privileged one runs under the runtime's default profile, which denies opening /proc/uptime for writing, as an Unconfined container can",
			Cases: []ContainerOutcome{
				{Case: CasePrivileged, State: Running, AppArmorProfile: "unconfined", Note: "no AppArmor profile"},
				{Case: CaseRuntimeDefault, State: Running, AppArmorProfile: RuntimeDefaultMarker, Note: "opening /proc/uptime for writing is denied (EACCES)"},
				{Case: CaseUnconfined, State: Running, AppArmorProfile: "unconfined", Note: "the control: opening /proc/uptime for writing works"},
			}}),
}
