package skew

import (
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew/release"
)

// AppArmor rules observed on nodes: the kubelet's enforcement and every
// row of KEP-24's Failure and Fallback Strategy table. They follow
// appArmorRules in catalogue order.
var appArmorNodeRules = []Rule{
	trailingKubeletsEnforce(aaRule("apparmor/kubelet/precedence", "container profile overrides pod profile",
		appArmorKEP+" §Proposal › API", Kubelet, needAppArmor,
		"pkg/security/apparmor/helpers.go: GetProfile", true,
		Observation{Summary: "pod-level Unconfined, container Localhost: the container runs confined by the container profile",
			Container: &ContainerOutcome{State: Running, AppArmorProfile: aaEnforcedLocal, Effect: EffectAppArmorDenyWrite}})),

	aaRule("apparmor/kubelet/enforce", "/proc/1/attr/current shows the profile and mode",
		appArmorKEP+" §Monitoring requirements", Kubelet, needAppArmor,
		"pkg/kubelet/kuberuntime/helpers.go: getAppArmorProfile", false,
		Observation{Summary: "Localhost profile enforced", Container: &ContainerOutcome{State: Running, AppArmorProfile: aaEnforcedLocal, Effect: EffectAppArmorDenyWrite}}),

	aaRule("apparmor/failure/row-1", "runtime without AppArmor support: one of the two allowed outcomes, reported",
		appArmorKEP+" §Failure and Fallback Strategy, row 1", Kubelet, needAppArmor,
		"runtime dependent (the kubelet passes the profile through CRI)", false,
		Observation{Summary: "pod created; the container either fails to start or runs without enforcement", Admission: Accepted,
			AnyOf: []ContainerOutcome{
				{State: Waiting, Reason: "CreateContainerError|RunContainerError|CrashLoopBackOff", Note: "fails to start"},
				{State: Running, AppArmorProfile: "unconfined", Note: "runs without its policy enforced"},
			}}),

	aaRule("apparmor/failure/row-2", "profile denies an action the workload needs: failure or misbehaviour shown",
		appArmorKEP+" §Failure and Fallback Strategy, row 2", Kubelet, needAppArmor,
		"runtime and workload dependent", false,
		Observation{Summary: "pod created; the workload fails to start, misbehaves (write denied with EACCES) or logs (complain mode)", Admission: Accepted,
			AnyOf: []ContainerOutcome{
				{State: Waiting, Reason: "RunContainerError|CrashLoopBackOff", Note: "fails to start"},
				// The process exits at once and is restarted with back-off;
				// kubelets from v1.35 keep it Terminated during the back-off
				// (see seccompRow2 in rules_seccomp.go).
				{State: Terminated, Reason: "Error", Note: "fails to start, exited and restarted with back-off"},
				{State: Running, AppArmorProfile: aaEnforcedLocal, Effect: EffectAppArmorDenyWrite, Note: "write denied with EACCES"},
				// "Log violations": a profile in complain mode lets the write
				// through and the kernel logs it (security/apparmor: an
				// AUDIT_APPARMOR_ALLOWED record, apparmor="ALLOWED"); the
				// label alone shows neither, so the effect names the log line.
				{State: Running, AppArmorProfile: names.AppArmorLocalhostProfile + " (complain)", Effect: EffectAppArmorComplainDenyWrite,
					Note: "the write allowed and its violation read from the kernel log"},
			}}),

	withRuntimes(aaRule("apparmor/failure/row-3", "localhost profile not loaded on the node: fails to start, retried, reason in an event",
		appArmorKEP+" §Failure and Fallback Strategy, row 3", Kubelet, needAppArmor,
		"runtime dependent; containerd v1.7.24 pkg/cri/server/container_create_linux.go (the default CRI service; the same in pkg/cri/sbserver): generateApparmorSpecOpts checks "+
			"/sys/kernel/security/apparmor/profiles at container create (\"apparmor profile not found <p>\", so CreateContainerError); "+
			"CRI-O: the rule's runtime variants (docs/runtimes.md)", false,
		Observation{Summary: "pod created; container fails to start, retried with back-off; event names the profile", Admission: Accepted,
			Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError", MessageContains: names.AppArmorNotLoadedProfile}}),
		func(Rule) []RuntimeVariant { return appArmorNotLoadedRuntimes() }),

	runtimeProfileInvalidRule("apparmor/failure/row-4", appArmorKEP+" §Failure and Fallback Strategy, row 4", "apparmor/api/runtime-profile-invalid"),

	{
		ID: "apparmor/failure/row-5", Title: "host without AppArmor, explicit localhost or runtime/default: kubelet blocks the pod",
		KEPRef: appArmorKEP + " §Failure and Fallback Strategy, row 5", Component: Kubelet, Host: needNoAppArmor,
		KEPWindow: release.Window{}, UpstreamWindow: win("", "1.31"),
		Source: "pkg/kubelet/kubelet.go: NewMainKubelet (AppArmor admit handler soft in v1.29.6/v1.30.14, hard from v1.31.14); pkg/kubelet/lifecycle/handlers.go: appArmorAdmitHandler.Admit",
		KEP:    always("kubelet blocks the pod", aaRow5Blocked),
		Upstream: []Phase{
			phase("soft admission: pod blocked", win("", "1.31"), aaRow5Blocked),
			phase("hard admission: pod rejected", win("1.31", ""), aaRow5Rejected),
		},
	},

	aaRule("apparmor/failure/row-6", "host without AppArmor, no profile set: container runs, unenforced",
		appArmorKEP+" §Failure and Fallback Strategy, row 6", Kubelet, needNoAppArmor,
		"pkg/security/apparmor/helpers.go: isRequired (false without a profile)", false,
		Observation{Summary: "pod created; container runs without AppArmor enforcement", Admission: Accepted,
			Container: &ContainerOutcome{State: Running, Note: "no AppArmor enforcement"}}),

	localhostInvalidRule("apparmor/failure/row-7", appArmorKEP+" §Failure and Fallback Strategy, row 7", "apparmor/api/localhost-invalid"),
}
