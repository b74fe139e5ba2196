package skew

import (
	"strings"

	"github.com/skewproof/skewproof/fixtures/names"
)

// What a spec observes: admission, stored fields and annotations, warnings,
// and the container's outcome on the node.

// Component says which version a rule is evaluated against.
type Component string

const (
	// Apiserver rules are evaluated against the kube-apiserver version.
	Apiserver Component = "apiserver"
	// Kubelet rules are evaluated against the kubelet version of the node
	// that runs the pod.
	Kubelet Component = "kubelet"
)

// Admission is the API server's answer to a create or update.
type Admission string

const (
	Accepted Admission = "accepted"
	Rejected Admission = "rejected"
)

// ContainerState is what the kubelet makes of a pod's container.
type ContainerState string

const (
	// Running: the container runs (see SeccompMode and AppArmorProfile).
	Running ContainerState = "running"
	// Waiting: the container does not start; Reason is the waiting reason
	// (and the kubelet retries with back-off per restartPolicy).
	Waiting ContainerState = "waiting"
	// Terminated: the container's process exited and the kubelet restarts
	// it with back-off (restart count and BackOff events show the retries).
	Terminated ContainerState = "terminated"
	// RejectedByKubelet: kubelet admission rejects the pod; the pod phase is
	// Failed and Reason is the pod status reason.
	RejectedByKubelet ContainerState = "rejected-by-kubelet"
	// Blocked: the kubelet keeps the pod Pending with the pod status reason
	// Reason and every container waiting with reason "Blocked".
	Blocked ContainerState = "blocked"
)

// ContainerOutcome is the expected state of the scenario's container.
type ContainerOutcome struct {
	State ContainerState `json:"state"`
	// SeccompMode is the value of "Seccomp:" in /proc/1/status (0 disabled,
	// 2 filter); nil means not asserted.
	SeccompMode *int `json:"seccompMode,omitempty"`
	// AppArmorProfile is the content of /proc/1/attr/current, e.g.
	// "skewproof-deny-write (enforce)"; "" means not asserted.
	AppArmorProfile string `json:"appArmorProfile,omitempty"`
	// Reason is the container waiting reason (Waiting) or the pod status
	// reason (Blocked, RejectedByKubelet); a "|" separates alternatives.
	Reason string `json:"reason,omitempty"`
	// MessageContains is a fragment of the status message or event.
	MessageContains string `json:"messageContains,omitempty"`
	// Note describes how the outcome shows (e.g. "mkdir fails with EPERM").
	Note string `json:"note,omitempty"`
	// Case names the sub-case of the scenario the outcome belongs to (an
	// entry of Observation.Cases), e.g. "execve" or "Unconfined".
	Case string `json:"case,omitempty"`
	// Effect names the profile whose effect a running container must show
	// by behaviour, besides its Seccomp mode or AppArmor label (one of the
	// Effect* constants); "" asserts none. A mode or a label proves only
	// that some profile is in force, not which: the harness proves the
	// effect (suites/internal/harness, effects.go) for every spec alike.
	Effect string `json:"effect,omitempty"`
}

// The effects a container can be asked to show (ContainerOutcome.Effect).
const (
	// EffectSeccompRuntimeDefault: a syscall the runtime default profiles
	// block (personality(ADDR_NO_RANDOMIZE), unshare(CLONE_NEWUSER)
	// without CAP_SYS_ADMIN; rules_runtimes.go) fails in the container
	// where it works in an Unconfined container on the same node. The
	// errno is the runtime's (EPERM or ENOSYS) and not asserted.
	EffectSeccompRuntimeDefault = "seccomp runtime/default"
	// EffectSeccompDenyMkdir: the Localhost profile SeccompLocalhostProfile
	// (deny-mkdir.json: SCMP_ACT_ERRNO with errnoRet 1 for mkdir and
	// mkdirat, everything else allowed): mkdir fails with EPERM and other
	// syscalls (a write, a read, a directory listing) work. The errno is
	// the profile's own (errnoRet), not the runtime's.
	EffectSeccompDenyMkdir = "seccomp localhost/" + names.SeccompLocalhostProfile
	// EffectAppArmorDenyWrite: the Localhost profile
	// AppArmorLocalhostProfile (deny /** w) in enforce mode: a write fails
	// with EACCES, a read works.
	EffectAppArmorDenyWrite = "apparmor localhost/" + names.AppArmorLocalhostProfile
	// EffectAppArmorComplainDenyWrite: AppArmorLocalhostProfile in
	// complain mode: the write it does not allow succeeds and the kernel
	// logs it (an audit line apparmor="ALLOWED" naming the profile), read
	// from the node's kernel log.
	EffectAppArmorComplainDenyWrite = "apparmor complain localhost/" + names.AppArmorLocalhostProfile
	// EffectAppArmorRuntimeDefault: the runtime's default AppArmor
	// profile in force: opening /proc/uptime for writing fails with EACCES
	// where an Unconfined container on the same node opens it (the
	// default profiles of containerd, contrib/apparmor/template.go, of
	// CRI-O and of containers/common all "deny @{PROC}/* w"), and a write
	// to /tmp works (so it is not the deny-write Localhost profile).
	// Asserted only where the runtime's default profile was read
	// (forRuntime drops it for a runtime whose profile nobody read).
	EffectAppArmorRuntimeDefault = "apparmor runtime/default"
)

// Observation is what a spec observes, concrete enough to assert.
type Observation struct {
	// Summary is one human-readable line.
	Summary string `json:"summary"`
	// Admission is the API server's answer; "" if not part of the rule.
	Admission Admission `json:"admission,omitempty"`
	// MessageContains holds fragments of the rejection message, one per
	// sub-case of the scenario.
	MessageContains []string `json:"messageContains,omitempty"`
	// Annotations are expected on the stored object with these values.
	Annotations map[string]string `json:"annotations,omitempty"`
	// AbsentAnnotations must not be on the stored object.
	AbsentAnnotations []string `json:"absentAnnotations,omitempty"`
	// Fields are expected on the stored object (JSON path → value).
	Fields map[string]string `json:"fields,omitempty"`
	// AbsentFields must be unset on the stored object.
	AbsentFields []string `json:"absentFields,omitempty"`
	// Warnings are the exact warning texts the API server returns.
	Warnings []string `json:"warnings,omitempty"`
	// WarningContains holds fragments each of which some seccomp or
	// AppArmor warning must contain (where the KEP requires a warning but
	// fixes neither its mechanism nor its text).
	WarningContains []string `json:"warningContains,omitempty"`
	// NoWarnings asserts that no seccomp or AppArmor warning is returned.
	NoWarnings bool `json:"noWarnings,omitempty"`
	// Container is the single allowed container outcome.
	Container *ContainerOutcome `json:"container,omitempty"`
	// AnyOf lists allowed container outcomes when the KEP allows several;
	// the spec reports which one it saw.
	AnyOf []ContainerOutcome `json:"anyOf,omitempty"`
	// Cases gives the outcomes of a scenario made of several containers, one
	// per named sub-case (ContainerOutcome.Case); entries with the same Case
	// are alternatives, any one of which is allowed.
	Cases []ContainerOutcome `json:"cases,omitempty"`
	// ReadyMessageContains / ReadyMessageExcludes assert on the message of
	// the node's Ready condition.
	ReadyMessageContains string `json:"readyMessageContains,omitempty"`
	ReadyMessageExcludes string `json:"readyMessageExcludes,omitempty"`
	// NotApplicable says why the rule cannot be observed at this version
	// (the spec must skip with this reason, never pass).
	NotApplicable string `json:"notApplicable,omitempty"`
}

// RuntimeDefaultMarker stands, in ContainerOutcome.AppArmorProfile, for
// the runtime's default profile; an expectation names the profile of the
// node's runtime (RuntimeDefaultAppArmorProfile). On a runtime whose
// default profile was not researched the marker stays in the expectation:
// the container must then be confined by some profile in enforce mode
// that is not one of skewproof's own (ConfinedByRuntimeDefault); only the
// profile's name, which the KEP leaves to the runtime, is not asserted.
const RuntimeDefaultMarker = "(runtime default)"

// OwnAppArmorPrefix starts the name of every AppArmor profile skewproof
// loads (profiles/apparmor): a runtime's default profile is none of them.
const OwnAppArmorPrefix = "skewproof-"

// ConfinedByRuntimeDefault says whether an AppArmor label
// (/proc/1/attr/current) can be a runtime's default profile whose name is
// not known: a profile in enforce mode, neither "unconfined" nor one of
// skewproof's own profiles.
func ConfinedByRuntimeDefault(label string) bool {
	name, ok := strings.CutSuffix(label, " (enforce)")
	return ok && name != "" && name != "unconfined" && !strings.HasPrefix(name, OwnAppArmorPrefix)
}

// namesRuntimeDefault says whether o expects the runtime's default
// AppArmor profile (RuntimeDefaultMarker).
func (o Observation) namesRuntimeDefault() bool {
	for _, c := range append(append([]ContainerOutcome(nil), o.AnyOf...), o.Cases...) {
		if c.AppArmorProfile == RuntimeDefaultMarker {
			return true
		}
	}
	return o.Container != nil && o.Container.AppArmorProfile == RuntimeDefaultMarker
}

// forRuntime resolves RuntimeDefaultMarker to the profile of the node's
// runtime as /proc/1/attr/current shows it; for a runtime whose default
// profile was not researched (profile "") the marker stays, and asserts
// confinement by a profile of any name (ConfinedByRuntimeDefault), without
// the effect of a profile nobody read (EffectAppArmorRuntimeDefault).
func (o Observation) forRuntime(profile string) Observation {
	fix := func(c *ContainerOutcome) *ContainerOutcome {
		if c == nil || c.AppArmorProfile != RuntimeDefaultMarker {
			return c
		}
		cc := *c
		if profile == "" {
			if cc.Effect == EffectAppArmorRuntimeDefault {
				cc.Effect = ""
			}
			return &cc
		}
		cc.AppArmorProfile = profile
		return &cc
	}
	o.Container = fix(o.Container)
	for _, l := range []*[]ContainerOutcome{&o.AnyOf, &o.Cases} {
		if len(*l) == 0 {
			continue
		}
		out := make([]ContainerOutcome, len(*l))
		for i := range *l {
			out[i] = *fix(&(*l)[i])
		}
		*l = out
	}
	return o
}
