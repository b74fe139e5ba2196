package skew

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
)

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
}

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
// node's runtime (RuntimeDefaultAppArmorProfile).
const RuntimeDefaultMarker = "(runtime default)"

// forRuntime resolves RuntimeDefaultMarker for a runtime.
func (o Observation) forRuntime(runtime string) Observation {
	fix := func(c *ContainerOutcome) *ContainerOutcome {
		if c == nil || c.AppArmorProfile != RuntimeDefaultMarker {
			return c
		}
		cc := *c
		cc.AppArmorProfile = RuntimeDefaultAppArmorProfile(runtime)
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

// Phase is an observation that holds for a window of versions.
type Phase struct {
	Name   string      `json:"name"`
	Window Window      `json:"window"`
	Obs    Observation `json:"observation"`
	// WithoutAppArmor, when set, replaces Obs on a host without AppArmor.
	WithoutAppArmor *Observation `json:"withoutAppArmor,omitempty"`
	// Unresearched marks an upstream phase whose sources are not served,
	// so no deviation can be claimed for it.
	Unresearched bool `json:"unresearched,omitempty"`
}

// HostCondition restricts the hosts a rule can be observed on.
type HostCondition struct {
	// AppArmor: nil = any host; true = needs AppArmor; false = needs a host
	// without AppArmor.
	AppArmor *bool `json:"appArmor,omitempty"`
	// Seccomp: nil = any host; true = needs seccomp filters.
	Seccomp *bool `json:"seccomp,omitempty"`
	// Runtimes lists the runtimes the rule holds for; empty = any.
	Runtimes []string `json:"runtimes,omitempty"`
}

// Rule is one scenario of the catalogue.
type Rule struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// KEPRef cites the specification: file, section or failure-table row.
	KEPRef    string    `json:"kepRef"`
	Component Component `json:"component"`
	// KEPWindow is where the rule's statement holds as the KEP plans it;
	// UpstreamWindow is where it holds in upstream releases.
	KEPWindow      Window        `json:"kepWindow"`
	UpstreamWindow Window        `json:"upstreamWindow"`
	Host           HostCondition `json:"host"`
	// Source cites the upstream code (file and function) the upstream
	// phases were read from.
	Source string `json:"source"`
	// KEP and Upstream give the observation for every version line; the
	// first phase whose window contains the version applies.
	KEP      []Phase `json:"kep"`
	Upstream []Phase `json:"upstream"`
	// SameAs names the rule this one is an alias of (failure rows that
	// repeat an API rule).
	SameAs string `json:"sameAs,omitempty"`
}

// HostFacts describe the host a kubelet rule is observed on: what preflight
// detects (clusters.DetectHost) and the node's container runtime.
type HostFacts struct {
	CgroupVersion int    `json:"cgroupVersion,omitempty"`
	Seccomp       bool   `json:"seccomp"`
	AppArmor      bool   `json:"apparmor"`
	Runtime       string `json:"runtime,omitempty"` // e.g. "containerd"
}

// DefaultHost is a Linux host with seccomp, AppArmor and containerd.
var DefaultHost = HostFacts{AppArmor: true, Seccomp: true, Runtime: "containerd"}

// Expectation is the oracle's answer for one rule at one version pair.
type Expectation struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	KEPRef    string    `json:"kepRef"`
	Component Component `json:"component"`
	Apiserver string    `json:"apiserver"`
	Kubelet   string    `json:"kubelet"`
	// Version is the version the rule was evaluated against.
	Version string `json:"version"`
	// Expected is what the upstream release does: assert this.
	Expected Observation `json:"expected"`
	// KEPPlanned is what the KEP plans for this version.
	KEPPlanned Observation `json:"kepPlanned"`
	KEPPhase   string      `json:"kepPhase"`
	Phase      string      `json:"upstreamPhase"`
	// Deviation is true when the upstream release differs from the plan.
	Deviation bool   `json:"deviation"`
	Reason    string `json:"reason"`
	Source    string `json:"source"`
	// Skip is set when the host cannot show the rule; a skip is never a pass.
	Skip string `json:"skip,omitempty"`
}

// Verdict classifies an observation against an expectation.
type Verdict string

const (
	Pass      Verdict = "pass"
	Deviation Verdict = "deviation"
	Fail      Verdict = "fail"
	Skip      Verdict = "skip"
	// Flaky: failed once and passed on the retry; both outcomes are kept.
	// Never a plain pass. Only a run gives it (the oracle never does).
	Flaky Verdict = "flaky"
)

// Verdict turns "did the observation match the KEP plan / the upstream
// expectation" into a verdict class.
func (e Expectation) Verdict(matchesKEP, matchesUpstream bool) Verdict {
	switch {
	case e.Skip != "" || e.Expected.NotApplicable != "":
		return Skip
	case matchesKEP:
		return Pass
	case e.Deviation && matchesUpstream:
		return Deviation
	}
	return Fail
}

var rulesByID = map[string]*Rule{}

func init() {
	for i := range ruleTable {
		r := &ruleTable[i]
		if _, dup := rulesByID[r.ID]; dup {
			panic("duplicate rule " + r.ID)
		}
		rulesByID[r.ID] = r
	}
}

// Rules returns every rule, in catalogue order.
func Rules() []Rule {
	out := make([]Rule, len(ruleTable))
	copy(out, ruleTable)
	return out
}

// RuleByID returns the rule with the given id.
func RuleByID(id string) (Rule, bool) {
	r, ok := rulesByID[id]
	if !ok {
		return Rule{}, false
	}
	return *r, true
}

// Expect returns the expected observation of rule id for a kube-apiserver
// and a kubelet version on a host.
func Expect(id string, apiserver, kubelet *version.Version, host HostFacts) (Expectation, error) {
	r, ok := rulesByID[id]
	if !ok {
		return Expectation{}, fmt.Errorf("unknown scenario id %q; see 'skewproof simulate' for the list of ids", id)
	}
	if err := CheckSkew(apiserver, kubelet); err != nil {
		return Expectation{}, err
	}
	return r.expect(apiserver, kubelet, host), nil
}

func (r *Rule) expect(apiserver, kubelet *version.Version, host HostFacts) Expectation {
	v := apiserver
	if r.Component == Kubelet {
		v = kubelet
	}
	kep, up := findPhase(r.KEP, v), findPhase(r.Upstream, v)
	for _, p := range []*Phase{&kep, &up} {
		if !host.AppArmor && p.WithoutAppArmor != nil {
			p.Obs = *p.WithoutAppArmor
		}
		p.Obs = p.Obs.forRuntime(host.Runtime)
	}
	e := Expectation{
		ID: r.ID, Title: r.Title, KEPRef: r.KEPRef, Component: r.Component,
		Apiserver: apiserver.String(), Kubelet: kubelet.String(), Version: v.String(),
		Expected: up.Obs, KEPPlanned: kep.Obs, KEPPhase: kep.Name, Phase: up.Name,
		Source: r.Source,
	}
	e.Deviation = !up.Unresearched && !Satisfies(up.Obs, kep.Obs)
	switch {
	case up.Unresearched:
		e.Reason = fmt.Sprintf("%s v%s: upstream behaviour not researched (%s); KEP plans %q", r.Component, v, up.Obs.NotApplicable, kep.Name)
	case e.Deviation:
		e.Reason = fmt.Sprintf("%s v%s: KEP plans %q (%s), upstream does %q (%s); source: %s",
			r.Component, v, kep.Name, kep.Window, up.Name, up.Window, r.Source)
	default:
		e.Reason = fmt.Sprintf("%s v%s: %s (KEP %s; upstream %s)", r.Component, v, up.Name, kep.Window, up.Window)
	}
	e.Skip = r.Host.unmet(host)
	return e
}

func findPhase(ps []Phase, v *version.Version) Phase {
	for _, p := range ps {
		if p.Window.Contains(v) {
			return p
		}
	}
	return Phase{Name: "unknown", Obs: Observation{NotApplicable: "no behaviour recorded for v" + v.String()}}
}

// Satisfies says whether an upstream observation meets everything the KEP's
// observation fixes: every assertion of kep is also made, with the same
// value, by up, which may assert more (an exact warning text where the KEP
// fixes none). A warning fragment the KEP requires is met by an exact
// upstream warning that contains it. Anything else is a deviation.
func Satisfies(up, kep Observation) bool {
	if len(kep.WarningContains) > 0 {
		for _, frag := range kep.WarningContains {
			found := false
			for _, w := range up.Warnings {
				if strings.Contains(w, frag) {
					found = true
				}
			}
			if !found && !slices.Contains(up.WarningContains, frag) {
				return false
			}
		}
		kep.WarningContains = nil
		up.WarningContains = nil
	}
	kep.Summary, up.Summary = "", ""
	var km, um map[string]any
	kb, _ := json.Marshal(kep)
	ub, _ := json.Marshal(up)
	_ = json.Unmarshal(kb, &km)
	_ = json.Unmarshal(ub, &um)
	for k, v := range km {
		if !reflect.DeepEqual(v, um[k]) {
			return false
		}
	}
	return true
}

// sameObservation compares everything a spec asserts (not the summary).
func sameObservation(a, b Observation) bool {
	a.Summary, b.Summary = "", ""
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func (h HostCondition) unmet(f HostFacts) string {
	var why []string
	if h.AppArmor != nil && *h.AppArmor && !f.AppArmor {
		why = append(why, "host has no AppArmor")
	}
	if h.AppArmor != nil && !*h.AppArmor && f.AppArmor {
		why = append(why, "needs a host without AppArmor")
	}
	if h.Seccomp != nil && *h.Seccomp && !f.Seccomp {
		why = append(why, "host has no seccomp filter support")
	}
	if len(h.Runtimes) > 0 && f.Runtime != "" {
		found := false
		for _, rt := range h.Runtimes {
			if rt == f.Runtime {
				found = true
			}
		}
		if !found {
			why = append(why, fmt.Sprintf("runtime %s not one of %s", f.Runtime, strings.Join(h.Runtimes, ", ")))
		}
	}
	return strings.Join(why, "; ")
}

// Simulate evaluates every rule for one version pair.
func Simulate(apiserver, kubelet *version.Version, host HostFacts) ([]Expectation, error) {
	if err := CheckSkew(apiserver, kubelet); err != nil {
		return nil, err
	}
	out := make([]Expectation, 0, len(ruleTable))
	for i := range ruleTable {
		out = append(out, ruleTable[i].expect(apiserver, kubelet, host))
	}
	return out, nil
}

// Change is one rule whose expected outcome differs across an upgrade.
type Change struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	KEPRef    string    `json:"kepRef"`
	Component Component `json:"component"`
	// Behaviour is true when the upstream outcome changes; false when only
	// the KEP plan (and so the deviation) changes.
	Behaviour bool        `json:"behaviourChanges"`
	Before    Expectation `json:"before"`
	After     Expectation `json:"after"`
}

// Upgrade compares a cluster entirely at from (apiserver and kubelets) with
// one entirely at to, and returns only the rules whose outcome changes for
// workloads: first those whose upstream behaviour changes, then those where
// only the KEP plan changes (a deviation appears or disappears).
func Upgrade(from, to *version.Version, host HostFacts) ([]Change, error) {
	if MinorOf(to).Less(MinorOf(from)) || (MinorOf(to) == MinorOf(from) && to.LessThan(from)) {
		return nil, fmt.Errorf("upgrade from v%s to v%s goes backwards; give the older version first", from, to)
	}
	var out []Change
	for i := range ruleTable {
		r := &ruleTable[i]
		b := r.expect(from, from, host)
		a := r.expect(to, to, host)
		if sameObservation(b.Expected, a.Expected) && sameObservation(b.KEPPlanned, a.KEPPlanned) && b.Deviation == a.Deviation {
			continue
		}
		out = append(out, Change{ID: r.ID, Title: r.Title, KEPRef: r.KEPRef, Component: r.Component,
			Behaviour: !sameObservation(b.Expected, a.Expected), Before: b, After: a})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Behaviour && !out[j].Behaviour })
	return out, nil
}

// Deviations lists, per rule, every upstream phase that differs from the
// KEP plan for some minor in [from, to].
type DeviationEntry struct {
	ID       string   `json:"id"`
	KEPRef   string   `json:"kepRef"`
	Minors   []string `json:"minors"`
	KEP      string   `json:"kep"`
	Upstream string   `json:"upstream"`
	Source   string   `json:"source"`
}

// Deviations evaluates every rule at every minor in [from, to] and groups
// the minors where plan and upstream differ.
func Deviations(from, to Minor) []DeviationEntry {
	var out []DeviationEntry
	for i := range ruleTable {
		r := &ruleTable[i]
		groups := map[string]*DeviationEntry{}
		var order []string
		for m := from; !to.Less(m); m = (Minor{m.Major, m.Minor + 1}) {
			v := MustParseVersion(fmt.Sprintf("%d.%d.0", m.Major, m.Minor))
			kep, up := findPhase(r.KEP, v), findPhase(r.Upstream, v)
			if up.Unresearched || Satisfies(up.Obs, kep.Obs) {
				continue
			}
			key := kep.Name + "\x00" + up.Name
			g, ok := groups[key]
			if !ok {
				g = &DeviationEntry{ID: r.ID, KEPRef: r.KEPRef, KEP: kep.Name + ": " + kep.Obs.Summary, Upstream: up.Name + ": " + up.Obs.Summary, Source: r.Source}
				groups[key] = g
				order = append(order, key)
			}
			g.Minors = append(g.Minors, m.String())
		}
		for _, k := range order {
			out = append(out, *groups[k])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
