package skew

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// Phase is an observation that holds for a window of versions.
type Phase struct {
	Name   string         `json:"name"`
	Window release.Window `json:"window"`
	Obs    Observation    `json:"observation"`
	// WithoutAppArmor, when set, replaces Obs on a host without AppArmor.
	WithoutAppArmor *Observation `json:"withoutAppArmor,omitempty"`
	// Unresearched marks an upstream phase whose sources were not read, so
	// no deviation can be claimed for it and the verdict is skip. Expect
	// answers with such a phase for every version outside Rule.Read.
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
	KEPWindow      release.Window `json:"kepWindow"`
	UpstreamWindow release.Window `json:"upstreamWindow"`
	Host           HostCondition  `json:"host"`
	// Source cites the upstream code (file and function) the upstream
	// phases were read from.
	Source string `json:"source"`
	// Read lists the releases whose sources the upstream phases were read
	// in. Outside them Expect answers skip, "not researched".
	Read SourcesRead `json:"sourcesRead"`
	// UpstreamAt, when set, is the component whose version selects the
	// upstream phase, where it is not Component: a kubelet rule whose
	// outcome upstream the API server decides (it rewrites the pod before
	// any kubelet sees it). The KEP phases follow Component.
	UpstreamAt Component `json:"upstreamAt,omitempty"`
	// KEPAt is UpstreamAt for the KEP phases: a kubelet rule whose
	// outcome the KEP lets the API server decide.
	KEPAt Component `json:"kepAt,omitempty"`
	// APIServerWindow, when set, is where the API server must be for the
	// scenario to exist at all (the fields it sends); outside it the KEP's
	// phase at the API server's version (not applicable) is both answers.
	APIServerWindow release.Window `json:"apiserverWindow,omitempty"`
	// KEP and Upstream give the observation for every version line; the
	// first phase whose window contains the version applies.
	KEP      []Phase `json:"kep"`
	Upstream []Phase `json:"upstream"`
	// SameAs names the rule this one is an alias of (failure rows that
	// repeat an API rule).
	SameAs string `json:"sameAs,omitempty"`
	// Runtimes, when set, makes the upstream phases depend on the node's
	// container runtime (runtime.go): the variant whose window holds the
	// node's runtime gives them. On a runtime no variant covers, the rule is
	// judged against the KEP alone (Expectation.RuntimeNotResearched).
	Runtimes []RuntimeVariant `json:"runtimes,omitempty"`
}

// HostFacts describe the host a kubelet rule is observed on: what preflight
// detects (nodefacts.Host) and the node's container runtime. An empty
// runtime fact is one the node does not state: it matches every runtime
// variant of a rule, and the oracle answers only where they all agree.
type HostFacts struct {
	CgroupVersion int    `json:"cgroupVersion,omitempty"`
	Seccomp       bool   `json:"seccomp"`
	AppArmor      bool   `json:"apparmor"`
	Runtime       string `json:"runtime,omitempty"` // e.g. "containerd"
	// RuntimeVersion is the CRI runtime's version, from
	// node.status.nodeInfo.containerRuntimeVersion, e.g. "1.7.24".
	RuntimeVersion string `json:"runtimeVersion,omitempty"`
	// OCIRuntime and OCIRuntimeVersion name the OCI runtime the CRI
	// runtime runs, e.g. "runc", "1.1.15" (node labels nodefacts.OCIRuntimeLabel,
	// nodefacts.OCIRuntimeVersionLabel).
	OCIRuntime        string `json:"ociRuntime,omitempty"`
	OCIRuntimeVersion string `json:"ociRuntimeVersion,omitempty"`
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
	// NotResearched says why no verdict can be given: the rule's sources
	// were not read at these versions (Skip says so too). Unlike a skip
	// for a fact of the cluster, it keeps a run from being green.
	NotResearched string `json:"notResearched,omitempty"`
	// Skip is set when the host cannot show the rule; a skip is never a pass.
	Skip string `json:"skip,omitempty"`
	// RuntimeNotResearched says why the rule's outcome on this node's
	// container runtime is not known from the sources read (a runtime no
	// variant of the rule covers): Expected is then the KEP plan, the
	// observation is judged against the KEP alone, and no deviation can be
	// claimed. It is set so that a run can list these rules apart: a match
	// with the KEP here is not a researched pass.
	RuntimeNotResearched string `json:"runtimeNotResearched,omitempty"`
	// RuntimeSource cites the runtime's code the expectation was read in,
	// for a rule whose outcome depends on the runtime.
	RuntimeSource string `json:"runtimeSource,omitempty"`
	// Observed lists the verdicts real clusters gave for the rule at these
	// minors (ObservedAt; Simulate fills it).
	Observed []ObservedVerdict `json:"observed,omitempty"`
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
	if err := release.CheckSkew(apiserver, kubelet); err != nil {
		return Expectation{}, err
	}
	return r.expect(apiserver, kubelet, host), nil
}

func (r *Rule) expect(apiserver, kubelet *version.Version, host HostFacts) Expectation {
	pick := func(c Component) *version.Version {
		if c == Kubelet {
			return kubelet
		}
		return apiserver
	}
	v, upAt := pick(r.Component), r.Component
	if r.UpstreamAt != "" {
		upAt = r.UpstreamAt
	}
	if r.KEPAt != "" {
		v = pick(r.KEPAt)
	}
	upV := pick(upAt)
	kep, up := findPhase(r.KEP, v), findPhase(r.Upstream, upV)
	if r.APIServerWindow != (release.Window{}) && !r.APIServerWindow.Contains(apiserver) {
		kep = findPhase(r.KEP, apiserver)
		up = kep
	}
	unread := r.notResearched(apiserver, kubelet)
	var rtUnread, rtSource string
	kepAlone, ownRuntimePhases := false, false
	switch {
	case unread != "":
		up = unresearched("not researched", release.Window{}, na(unread))
	case len(r.Runtimes) > 0:
		var p Phase
		p, rtSource, rtUnread = r.runtimePhase(host, upV)
		if rtUnread != "" {
			// Judged against the KEP alone.
			kepAlone = true
			up = Phase{Name: "runtime not researched: the KEP plan", Window: kep.Window, Obs: kep.Obs, WithoutAppArmor: kep.WithoutAppArmor}
		} else {
			ownRuntimePhases = !reflect.DeepEqual(p, up)
			up = p
		}
	}
	aaDefault, aaSource, aaUnread := runtimeDefaultAppArmorFor(host)
	for _, p := range []*Phase{&kep, &up} {
		if !host.AppArmor && p.WithoutAppArmor != nil {
			p.Obs = *p.WithoutAppArmor
		}
		// Either phase may name the runtime default: the KEP's Phase 3 of
		// a static pod does where upstream names a Localhost profile.
		if p.Obs.namesRuntimeDefault() && rtUnread == "" {
			rtUnread, rtSource = aaUnread, aaSource
		}
		p.Obs = p.Obs.forRuntime(aaDefault)
	}
	e := Expectation{
		ID: r.ID, Title: r.Title, KEPRef: r.KEPRef, Component: r.Component,
		Apiserver: apiserver.String(), Kubelet: kubelet.String(), Version: v.String(),
		Expected: up.Obs, KEPPlanned: kep.Obs, KEPPhase: kep.Name, Phase: up.Name,
		Source: r.Source,
	}
	e.Deviation = !up.Unresearched && !Satisfies(up.Obs, kep.Obs)
	// The upstream windows a reason names end where the reading ends.
	upWindow := up.Window.Intersect(r.Read.Window())
	at := fmt.Sprintf("%s v%s", r.Component, v)
	if upAt != r.Component {
		at += fmt.Sprintf(" (upstream phase set by %s v%s)", upAt, upV)
	}
	switch {
	case unread != "":
		e.Reason = fmt.Sprintf("%s: %s; KEP plans %q", at, unread, kep.Name)
	case up.Unresearched:
		e.Reason = fmt.Sprintf("%s: upstream behaviour not researched (%s); KEP plans %q", at, up.Obs.NotApplicable, kep.Name)
	case kepAlone:
		e.Reason = fmt.Sprintf("%s: %s; judged against the KEP plan %q alone", at, rtUnread, kep.Name)
	case e.Deviation && ownRuntimePhases:
		e.Reason = fmt.Sprintf("%s: KEP plans %q (%s), upstream does %q (%s) on %s; source: %s; runtime: %s",
			at, kep.Name, kep.Window, up.Name, upWindow, describeRuntime(host), r.Source, rtSource)
	case e.Deviation:
		e.Reason = fmt.Sprintf("%s: KEP plans %q (%s), upstream does %q (%s); source: %s",
			at, kep.Name, kep.Window, up.Name, upWindow, r.Source)
	default:
		e.Reason = fmt.Sprintf("%s: %s (KEP %s; upstream %s)", at, up.Name, kep.Window, upWindow)
	}
	if rtUnread != "" && !kepAlone {
		e.Reason += "; " + rtUnread
	}
	e.Skip = joinReasons(unread, r.Host.unmet(host))
	e.NotResearched = unread
	e.RuntimeNotResearched, e.RuntimeSource = rtUnread, rtSource
	return e
}

func joinReasons(rs ...string) string {
	var out []string
	for _, r := range rs {
		if r != "" {
			out = append(out, r)
		}
	}
	return strings.Join(out, "; ")
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
		if k == "container" {
			if !narrowsContainer(um[k], v) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(v, um[k]) {
			return false
		}
	}
	return true
}

// narrowsContainer says whether an upstream container outcome (decoded
// JSON) is the KEP's, or the KEP's with a waiting or status reason that
// picks some of the KEP's alternatives ("CreateContainerError" of
// "CreateContainerError|RunContainerError"): a runtime that takes one of
// the outcomes the KEP allows does not deviate.
func narrowsContainer(up, kep any) bool {
	um, uok := up.(map[string]any)
	km, kok := kep.(map[string]any)
	if !uok || !kok {
		return reflect.DeepEqual(up, kep)
	}
	for k, v := range km {
		if k == "reason" {
			us, _ := um[k].(string)
			ks, _ := v.(string)
			if us == "" {
				return false
			}
			for _, alt := range strings.Split(us, "|") {
				if !slices.Contains(strings.Split(ks, "|"), alt) {
					return false
				}
			}
			continue
		}
		if !reflect.DeepEqual(v, um[k]) {
			return false
		}
	}
	for k := range um {
		if _, ok := km[k]; !ok {
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
