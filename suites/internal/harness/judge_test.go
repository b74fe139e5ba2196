package harness

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// judge: every way an observation can meet an expectation, and that no
// observation, an unmet Must and an oracle skip never come out as a pass.
func TestJudge(t *testing.T) {
	accepted := skew.Observation{Summary: "accepted", Admission: skew.Accepted}
	rejected := skew.Observation{Summary: "rejected", Admission: skew.Rejected, MessageContains: []string{"must be a relative path"}}
	same := skew.Expectation{Version: "1.37.2", Expected: accepted, KEPPlanned: accepted, Reason: "r"}
	deviates := skew.Expectation{Version: "1.37.2", Expected: accepted, KEPPlanned: rejected, Deviation: true, Reason: "shipped late"}
	undocumented := deviates
	undocumented.Deviation = false
	skipped := same
	skipped.Skip = "host has no AppArmor"
	gotAccepted := observe.Observation{Admission: skew.Accepted}
	gotRejected := observe.Observation{Admission: skew.Rejected, Errors: []string{"spec.x: must be a relative path"}}
	node := &Node{Name: "w1"}
	for _, c := range []struct {
		name    string
		exp     skew.Expectation
		subs    []Sub
		want    skew.Verdict
		failure []string // fragments of the failure
	}{
		{"matches the KEP", same, []Sub{{Name: "a", Obs: gotAccepted}}, skew.Pass, nil},
		{"no observation", same, nil, skew.Fail, []string{"judged with no observation"}},
		{"matches neither", same, []Sub{{Name: "a", Obs: gotRejected}}, skew.Fail,
			[]string{"matches neither the KEP nor upstream v1.37.2", "a: admission: want accepted, got rejected"}},
		{"a Must check failed", same, []Sub{{Name: "a", Obs: gotAccepted, Must: []string{"mkdir: ok"}}}, skew.Fail, []string{"a: mkdir: ok"}},
		{"documented deviation", deviates, []Sub{{Name: "a", Obs: gotAccepted}}, skew.Deviation, nil},
		{"deviation with a failed Must", deviates, []Sub{{Name: "a", Obs: gotAccepted, Must: []string{"x"}}}, skew.Fail, []string{"a: x"}},
		{"matches the KEP where upstream is documented to deviate", deviates, []Sub{{Name: "a", Obs: gotRejected}}, skew.Pass, nil},
		{"differs from the KEP, deviation not documented", undocumented, []Sub{{Name: "a", Obs: gotAccepted}}, skew.Fail, nil},
		{"judged although the oracle skips", skipped, []Sub{{Name: "a", Obs: gotAccepted}}, skew.Fail, []string{"oracle skips it: host has no AppArmor"}},
		{"one sub-case of two fails", same, []Sub{{Name: "a", Obs: gotAccepted}, {Name: "b", Obs: gotRejected}}, skew.Fail, []string{"b: admission"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := judge("seccomp/api/x", node, c.exp, reports.Result{ID: "seccomp/api/x"}, c.subs)
			if r.Verdict != c.want {
				t.Fatalf("verdict %s, want %s (%+v)", r.Verdict, c.want, r)
			}
			for _, f := range c.failure {
				if !strings.Contains(r.Failure, f) {
					t.Errorf("failure %q lacks %q", r.Failure, f)
				}
			}
			switch r.Verdict {
			case skew.Fail:
				if r.Failure == "" {
					t.Error("a failure without its reason")
				}
			case skew.Deviation:
				if !strings.Contains(r.Reason, "known upstream deviation: shipped late") || !strings.Contains(r.Outcome, "differs from the KEP plan") {
					t.Errorf("deviation without its citation: %+v", r)
				}
			case skew.Pass:
				if !strings.HasPrefix(r.Reason, "matches the KEP") || r.Failure != "" {
					t.Errorf("pass: %+v", r)
				}
			}
		})
	}
}

// A check that could not be made stops a spec whose other checks passed
// (never a pass), and does not hide a failure of the checks that were made.
func TestJudgeUnmade(t *testing.T) {
	exp := skew.Expectation{Version: "1.37.2", Expected: skew.Observation{Admission: skew.Accepted}, KEPPlanned: skew.Observation{Admission: skew.Accepted}}
	unmade := &Unmade{Reason: "dmesg failed", SetUp: true}
	r, stop := judge("x/y/z", nil, exp, reports.Result{}, []Sub{{Name: "a", Obs: observe.Observation{Admission: skew.Accepted}, Unmade: unmade}})
	if stop == nil || !stop.SetUp || !strings.Contains(stop.Reason, "a: dmesg failed") {
		t.Errorf("passing checks with one not made: %+v, stop %+v; want a stop with the reason", r, stop)
	}
	r, stop = judge("x/y/z", nil, exp, reports.Result{}, []Sub{{Name: "a", Obs: observe.Observation{Admission: skew.Rejected}, Unmade: unmade}})
	if stop != nil || r.Verdict != skew.Fail {
		t.Errorf("a failing check with one not made: %+v, stop %+v; want fail", r, stop)
	}
}

// ownPass: a spec of skewproof's own rules records a pass with the API
// server and, when it is about one, the node and its kubelet, as the
// oracle's rules do; an oracle rule cannot be passed without being judged.
func TestOwnPass(t *testing.T) {
	saved := Env.APIServer
	defer func() { Env.APIServer = saved }()
	Env.APIServer = release.MustParseVersion("1.37.2")
	r, err := ownPass("profiles/agent/ready", nil, "agent Ready")
	if err != nil || r != (reports.Result{ID: "profiles/agent/ready", APIServer: "1.37.2", Verdict: skew.Pass, Outcome: "agent Ready"}) {
		t.Errorf("cluster-wide: %+v, %v", r, err)
	}
	r, err = ownPass("profiles/node-status/partial", &Node{Name: "w1", Kubelet: release.MustParseVersion("1.34.4")}, "fault on w1")
	if err != nil || r.Node != "w1" || r.Kubelet != "1.34.4" || r.Verdict != skew.Pass {
		t.Errorf("about a node: %+v, %v", r, err)
	}
	if _, err := ownPass("seccomp/api/types", nil, "x"); err == nil || !strings.Contains(err.Error(), "Scenario.Judge") {
		t.Errorf("an oracle rule passed without judging: %v", err)
	}
}

// A spec run under one of skewproof's restricted handlers (failure row 1)
// observes skewproof's staging: its result is marked staged and its reason
// says so, never a plain pass; any other handler is the runtime's own.
func TestJudgeStaged(t *testing.T) {
	node := &Node{Name: "w1", Host: skew.HostFacts{OCIRuntime: "crun", OCIRuntimeVersion: "1.21"}}
	if s := Staged("runc", node, true); s != "" {
		t.Errorf("handler runc staged: %q", s)
	}
	staged := Staged("skewproof-noseccomp", node, true)
	for _, want := range []string{"skewproof's restricted runtime handler skewproof-noseccomp", ".linux.seccomp", "crun 1.21"} {
		if !strings.Contains(staged, want) {
			t.Errorf("Staged = %q, lacks %q", staged, want)
		}
	}
	if s := Staged("skewproof-noapparmor", nil, false); !strings.Contains(s, "this cluster's runtime handler skewproof-noapparmor") || !strings.Contains(s, ".process.apparmorProfile") {
		t.Errorf("on an existing cluster: %q", s)
	}
	ok := skew.Observation{Summary: "runs", Admission: skew.Accepted}
	exp := skew.Expectation{Version: "1.37.2", Expected: ok, KEPPlanned: ok, Reason: "row 1"}
	r, stop := judge("seccomp/failure/row-1", node, exp, reports.Result{Staged: staged}, []Sub{{Name: "a", Obs: observe.Observation{Admission: skew.Accepted}}})
	if stop != nil || r.Verdict != skew.Pass || r.Staged != staged {
		t.Fatalf("staged pass: %+v, stop %+v", r, stop)
	}
	want := "staged: observes skewproof's restricted runtime handler skewproof-noseccomp"
	if !strings.HasPrefix(r.Reason, want) || !strings.Contains(r.Reason, "not the runtime's own behaviour; matches the KEP: row 1") {
		t.Errorf("reason %q, want it to start with %q", r.Reason, want)
	}
	if reports.VerdictLabel(r) != "pass (staged)" {
		t.Errorf("label %q", reports.VerdictLabel(r))
	}
}

// The effects an outcome names are probed only in a container whose state,
// mode and label make it a candidate for that outcome.
func TestEffectsWanted(t *testing.T) {
	two := 2
	enforce := skew.ContainerOutcome{State: skew.Running, AppArmorProfile: "p (enforce)", Effect: skew.EffectAppArmorDenyWrite}
	complain := skew.ContainerOutcome{State: skew.Running, AppArmorProfile: "p (complain)", Effect: skew.EffectAppArmorComplainDenyWrite}
	anyOf := skew.Observation{AnyOf: []skew.ContainerOutcome{{State: skew.Waiting}, enforce, complain}}
	exp := skew.Expectation{Expected: anyOf, KEPPlanned: anyOf}
	for label, want := range map[string]string{"p (enforce)": skew.EffectAppArmorDenyWrite, "p (complain)": skew.EffectAppArmorComplainDenyWrite, "unconfined": ""} {
		got := effectsWanted(Sub{Obs: observe.Observation{Container: &observe.Container{State: skew.Running, AppArmorProfile: label}}}, exp, 0, 1)
		if strings.Join(got, ",") != want {
			t.Errorf("label %q: effects %q, want %q", label, got, want)
		}
	}
	seccomp := skew.Observation{Container: &skew.ContainerOutcome{State: skew.Running, SeccompMode: &two, Effect: skew.EffectSeccompDenyMkdir}}
	exp = skew.Expectation{Expected: seccomp, KEPPlanned: seccomp}
	if got := effectsWanted(Sub{Obs: observe.Observation{Container: &observe.Container{State: skew.Waiting}}}, exp, 0, 1); len(got) != 0 {
		t.Errorf("a container that does not run: effects %q", got)
	}
	if got := effectsWanted(Sub{Obs: observe.Observation{Container: &observe.Container{State: skew.Running, SeccompMode: &two}}}, exp, 0, 1); len(got) != 1 {
		t.Errorf("a running filtered container: effects %q", got)
	}
}

// An effect the harness could not probe never leaves a pass: the spec
// stops with the reason; one probed and not shown fails.
func TestJudgeEffects(t *testing.T) {
	two := 2
	o := skew.Observation{Container: &skew.ContainerOutcome{State: skew.Running, SeccompMode: &two, Effect: skew.EffectSeccompDenyMkdir}}
	exp := skew.Expectation{Version: "1.37.2", Expected: o, KEPPlanned: o, Reason: "r"}
	run := func(e ...observe.Effect) (reports.Result, *Unmade) {
		c := &observe.Container{State: skew.Running, SeccompMode: &two, Effects: e}
		return judge("seccomp/kubelet/localhost", &Node{Name: "w1"}, exp, reports.Result{}, []Sub{{Name: "a", Obs: observe.Observation{Container: c}}})
	}
	if r, stop := run(); r.Verdict != skew.Fail || stop != nil {
		t.Errorf("mode alone: %s %+v, want fail", r.Verdict, stop)
	}
	if r, _ := run(observe.Effect{Name: skew.EffectSeccompDenyMkdir, Detail: "mkdir: ok"}); r.Verdict != skew.Fail || !strings.Contains(r.Failure, "mkdir: ok") {
		t.Errorf("not shown: %s %q, want fail", r.Verdict, r.Failure)
	}
	if r, stop := run(observe.Effect{Name: skew.EffectSeccompDenyMkdir, Shown: true}); r.Verdict != skew.Pass || stop != nil {
		t.Errorf("shown: %s %+v, want pass", r.Verdict, stop)
	}
	if _, stop := run(observe.Effect{Name: skew.EffectSeccompDenyMkdir, Unmade: "no control", UnmadeSetUp: true}); stop == nil || !stop.SetUp || !strings.Contains(stop.Reason, "no control") {
		t.Errorf("unmade: stop %+v, want a set-up stop naming the reason", stop)
	}
}

// A sub-case that names its fragment gets that fragment of the oracle's
// list, even where the list has one fragment per sub-case (the v1.29
// update/immutable scenario: three sub-cases, three fragments, the third
// sub-case wanting the second); the others get theirs by position.
func TestFragmentPicksFromTheWholeList(t *testing.T) {
	o := skew.Observation{Admission: skew.Rejected, MessageContains: []string{"add", "change or remove", "field"}}
	for i, c := range []struct {
		sub  Sub
		want string
	}{
		{Sub{Want: Fragment(0)}, "add"},
		{Sub{Want: Fragment(1)}, "change or remove"},
		{Sub{Want: Fragment(1)}, "change or remove"},
	} {
		if got := c.sub.want(o, i, 3).MessageContains; len(got) != 1 || got[0] != c.want {
			t.Errorf("sub-case %d: %q, want %q", i, got, c.want)
		}
	}
	for i, want := range []string{"add", "change or remove", "field"} {
		if got := (Sub{Want: Generic}).want(o, i, 3).MessageContains; len(got) != 1 || got[0] != want {
			t.Errorf("by position, sub-case %d: %q, want %q", i, got, want)
		}
	}
}
