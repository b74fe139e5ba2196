package harness

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// These tests need no cluster: they check how sub-case expectations are
// derived from the oracle's observation.

func TestSubWantSplitsMessagesPerSubCase(t *testing.T) {
	o := skew.Observation{Admission: skew.Rejected, MessageContains: []string{"first", "second"}}
	s := Sub{}
	if got := s.want(o, 1, 2).MessageContains; len(got) != 1 || got[0] != "second" {
		t.Errorf("sub-case 1 of 2: %q", got)
	}
	if got := s.want(o, 0, 3).MessageContains; len(got) != 2 {
		t.Errorf("fragments must not be split when the counts differ: %q", got)
	}
}

func TestGenericDropsCanonicalValues(t *testing.T) {
	o := skew.Observation{Admission: skew.Accepted, Fields: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"},
		Warnings: []string{"w"}, AbsentFields: []string{"x"}}
	g := Generic(o)
	if g.Fields != nil || g.Annotations != nil || g.Warnings != nil || g.Admission != skew.Accepted || len(g.AbsentFields) != 1 {
		t.Errorf("generic = %+v", g)
	}
}

func TestRePrefixAndLabels(t *testing.T) {
	w := skew.SeccompAnnotationWarning("spec.template.", skew.SeccompPodAnnotation)
	got := RePrefix("spec.jobTemplate.spec.template.")(skew.Observation{Warnings: []string{w}}).Warnings[0]
	if got != skew.SeccompAnnotationWarning("spec.jobTemplate.spec.template.", skew.SeccompPodAnnotation) {
		t.Errorf("rePrefix = %q", got)
	}
	ls := SpecLabels("seccomp/failure/row-2", &Node{Name: "w1"})
	want := map[string]bool{"seccomp": true, "LinuxOnly": true, "seccomp-failure-row-2": true, "failure-row-2": true, "kubelet": true, "node:w1": true}
	for _, l := range ls {
		delete(want, l)
	}
	if len(want) != 0 {
		t.Errorf("labels %q lack %v", ls, want)
	}
	for _, r := range skew.Rules() {
		{
			for _, l := range SpecLabels(r.ID, nil) {
				for _, c := range "&|!,()/" {
					for _, lc := range l {
						if lc == c {
							t.Errorf("label %q of %s has %q, which Ginkgo forbids", l, r.ID, c)
						}
					}
				}
			}
		}
	}
}

func TestMissingHandlerEvent(t *testing.T) {
	ev := func(reason, msg string) corev1.Event { return corev1.Event{Reason: reason, Message: msg} }
	containerd := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "skewproof-noapparmor" is configured`
	crio := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime handler skewproof-noapparmor from runtime list map[runc:...]`
	for _, tc := range []struct {
		events []corev1.Event
		want   string
	}{
		{nil, ""},
		{[]corev1.Event{ev("Scheduled", "assigned"), ev(SandboxFailed, containerd)}, containerd},
		{[]corev1.Event{ev(SandboxFailed, crio)}, crio},
		// Another sandbox failure (e.g. the network not ready yet) is not
		// a missing handler.
		{[]corev1.Event{ev(SandboxFailed, "plugin type=\"ptp\" failed (add): failed to allocate")}, ""},
		{[]corev1.Event{ev("Failed", containerd)}, ""},
	} {
		if got := missingHandlerEvent(tc.events); got != tc.want {
			t.Errorf("missingHandlerEvent(%v) = %q, want %q", tc.events, got, tc.want)
		}
	}
}

func TestParsePID1(t *testing.T) {
	status := "Name:\tsleep\nNoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\n"
	for _, c := range []struct {
		attr, label string
	}{
		{"", ""}, // no AppArmor: the read fails, nothing printed
		{"skewproof-deny-write (enforce)\n", "skewproof-deny-write (enforce)"},
		{"unconfined\n", "unconfined"},
	} {
		mode, label, err := parsePID1(status+attrMarker+"\n"+c.attr, "p", "c")
		if err != nil || mode == nil || *mode != 2 || label != c.label {
			t.Errorf("attr %q: mode %v, label %q, %v", c.attr, mode, label, err)
		}
	}
	if _, _, err := parsePID1(status, "p", "c"); err == nil {
		t.Error("output without the marker accepted")
	}
	if _, _, err := parsePID1("Name:\tsleep\n"+attrMarker+"\n", "p", "c"); err == nil {
		t.Error("status without a Seccomp line accepted")
	}
}

// A redirection in the script opens a file for writing, which the
// deny-write AppArmor profile forbids: the label would read as empty.
func TestReadPID1ScriptOpensNothingForWriting(t *testing.T) {
	if strings.ContainsAny(readPID1Script, "<>") {
		t.Errorf("readPID1Script redirects (%q): under skewproof-deny-write (deny /** w) the redirection fails and its command is skipped", readPID1Script)
	}
}

// Node access is per node: a spec that needs it picks a node that has it
// (a worker first), whatever the others (a User-Mode Linux node has none).
func TestFirstWithAccess(t *testing.T) {
	cp := Node{Name: "a-control-plane", ControlPlane: true, Access: nodeaccess.Docker}
	uml := Node{Name: "a-uml", Access: nodeaccess.None}
	w := Node{Name: "b-worker", Access: nodeaccess.Docker}
	for _, c := range []struct {
		nodes []Node
		want  string
		ok    bool
	}{
		{[]Node{cp, uml, w}, "b-worker", true},
		{[]Node{cp, uml}, "a-control-plane", true},
		{[]Node{uml}, "", false},
		{nil, "", false},
	} {
		n, ok := FirstWithAccess(c.nodes)
		if n.Name != c.want || ok != c.ok {
			t.Errorf("FirstWithAccess(%v) = %s, %v; want %s, %v", c.nodes, n.Name, ok, c.want, c.ok)
		}
	}
	Env.Nodes = []Node{cp, uml, w}
	defer func() { Env.Nodes = nil }()
	if _, err := NodeShell(context.Background(), "a-uml", "true"); err == nil || !strings.Contains(err.Error(), "no access to node a-uml") {
		t.Errorf("NodeShell on a node without access: %v", err)
	}
}

// TryAll's script, run by a real sh: each probe's result and streams come
// back apart, as Try describes them one exec each (stderr, then stdout); a probe the exec
// did not reach failed, naming the exec's error.
func TestTryAllScriptKeepsProbesApart(t *testing.T) {
	probes := []Probe{
		{"fails", "echo out; echo 'cannot do it' >&2; exit 3"},
		{"quotes", `test "$(echo 'a b')" = 'a b'`},
		{"no newline", "printf partial; printf err >&2; false"},
		{"last", "true"},
	}
	script := tryAllScript(probes)
	if strings.Contains(script, ">/dev/null") || strings.Contains(script, "> /") {
		t.Errorf("the script redirects to a file: %s", script)
	}
	cmd := exec.Command("sh", "-c", script)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	ok, desc := parseTryAll(probes, out.String(), errb.String(), nil)
	want := []struct {
		ok   bool
		desc string
	}{{false, "fails: cannot do it\n out"}, {true, "quotes: ok"}, {false, "no newline: err partial"}, {true, "last: ok"}}
	for i, w := range want {
		if ok[i] != w.ok || desc[i] != w.desc {
			t.Errorf("probe %d: %v %q, want %v %q", i, ok[i], desc[i], w.ok, w.desc)
		}
	}
	// The exec ended after the first probe: the others were not run.
	cut := out.String()[:strings.Index(out.String(), tryMarker+"1--")]
	ok, desc = parseTryAll(probes, cut, errb.String(), errors.New("stream closed"))
	if ok[0] || desc[0] != "fails: cannot do it\n out" {
		t.Errorf("probe 0 of a cut exec: %v %q", ok[0], desc[0])
	}
	for i := 1; i < len(probes); i++ {
		if ok[i] || !strings.Contains(desc[i], "not run (stream closed)") {
			t.Errorf("probe %d of a cut exec: %v %q", i, ok[i], desc[i])
		}
	}
}

// The read of PID 1 with the effect probes after it, run by a real sh on
// this host's PID 1: the mode and label come out as the read alone gives
// them, and each probe's result as TryAll gives it; a label without a
// newline still ends before the first probe.
func TestReadPID1WithProbes(t *testing.T) {
	probes := []Probe{{"fails", "echo no >&2; exit 1"}, {"works", "true"}}
	run := func(script string) (string, string) {
		cmd := exec.Command("sh", "-c", script)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v %s", script, err, errb.String())
		}
		return out.String(), errb.String()
	}
	alone, _ := run(readPID1WithProbes(nil))
	wantMode, wantLabel, err := parsePID1(alone, "p", "c")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr := run(readPID1WithProbes(probes))
	mode, label, runs, err := parsePID1WithProbes(probes, out, stderr, "p", "c")
	if err != nil || *mode != *wantMode || label != wantLabel {
		t.Errorf("with probes: mode %v, label %q, %v; alone: %d, %q", mode, label, err, *wantMode, wantLabel)
	}
	if r := runs[probes[0]]; r.ok || r.desc != "fails: no" {
		t.Errorf("probe fails: %+v", r)
	}
	if r := runs[probes[1]]; !r.ok || r.desc != "works: ok" {
		t.Errorf("probe works: %+v", r)
	}
	status := "Name:\tsleep\nSeccomp:\t2\n"
	m := tryMarker + "0--"
	_, label, runs, err = parsePID1WithProbes(probes[:1], status+attrMarker+"\nunconfined\n"+m+"\n"+m+"rc=0\n", m+"\n", "p", "c")
	if err != nil || label != "unconfined" || !runs[probes[0]].ok {
		t.Errorf("label without a newline: %q, %+v, %v", label, runs, err)
	}
	if _, _, _, err := parsePID1WithProbes(probes, status+attrMarker+"\n", "", "p", "c"); err == nil {
		t.Error("output without the probes accepted")
	}
}

// The probes run with the read of PID 1 are those of every effect the
// oracle names, each once; a prover takes their results from that read,
// and only for the container it observed.
func TestCandidateProbesServeTheProvers(t *testing.T) {
	sc := &Scenario{Exp: skew.Expectation{
		KEPPlanned: skew.Observation{Cases: []skew.ContainerOutcome{{Case: "a", Effect: skew.EffectAppArmorDenyWrite}, {Case: "b", Effect: skew.EffectAppArmorRuntimeDefault}}},
		Expected:   skew.Observation{Container: &skew.ContainerOutcome{Effect: skew.EffectAppArmorDenyWrite}},
	}}
	got := sc.candidateProbes()
	want := append(slices.Clone(denyWriteProbes), appArmorRuntimeDefaultProbes...)
	if !slices.Equal(got, want) {
		t.Errorf("candidate probes %v, want %v", got, want)
	}
	c := &observe.Container{Pod: "p", Name: "c"}
	runs := map[Probe]probeRun{}
	for _, p := range got {
		runs[p] = probeRun{p.Label == "read", p.Label + ": seen"}
	}
	sc.keepProbed(c, runs)
	// Every probe was run with the read: no exec (the scenario has no
	// framework to make one).
	ok, desc := sc.tryIn(context.Background(), c, denyWriteProbes...)
	if !slices.Equal(ok, []bool{false, true}) || !slices.Equal(desc, []string{"write: seen", "read: seen"}) {
		t.Errorf("deny-write from the read: %v %v", ok, desc)
	}
	if e := proveAppArmorDenyWrite(context.Background(), sc, c); e.Shown {
		t.Errorf("a write that failed without Permission denied shown as denied: %+v", e)
	}
	if (&Scenario{}).candidateProbes() != nil {
		t.Error("probes for an oracle that names no effect")
	}
}
