package matrix

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

func TestRuntimeMatches(t *testing.T) {
	rt := "containerd/2.4.2+crun/1.21"
	for sel, want := range map[string]bool{
		"crun": true, "containerd": true, "containerd/2": true, "containerd/2.4": true, "containerd/2.4.2": true,
		"containerd/1": false, "containerd/2.4.20": false, "runc": false, "+crun": true, "containerd/2+": true,
		"containerd/2+crun/1.21": true, "containerd/1.7+crun": false, "+runc": false, "cri-o": false,
	} {
		if got := RuntimeMatches(rt, sel); got != want {
			t.Errorf("RuntimeMatches(%q, %q) = %v, want %v", rt, sel, got, want)
		}
	}
}

// mixedRun is one run on a cluster whose two 1.37.2 workers differ in
// their OCI runtime only: a failure row the vendor's runtime breaks.
func mixedRun() Run {
	rs := []reports.Result{
		{ID: "seccomp/api/types", APIServer: "1.37.2", Verdict: skew.Pass},
		{ID: "seccomp/kubelet/enforce", Node: "w1", Kubelet: "1.37.2", APIServer: "1.37.2", CRIRuntime: "containerd 1.7.24", OCIRuntime: "runc 1.1.15", Verdict: skew.Pass},
		{ID: "seccomp/kubelet/enforce", Node: "w2", Kubelet: "1.37.2", APIServer: "1.37.2", CRIRuntime: "containerd 1.7.24", OCIRuntime: "vendor 0.1", Verdict: skew.Fail,
			RuntimeNotResearched: "not read"},
		{ID: "seccomp/failure/row-4", Node: "w1", Kubelet: "1.37.2", APIServer: "1.37.2", CRIRuntime: "containerd 1.7.24", OCIRuntime: "runc 1.1.15", Verdict: skew.Pass},
		{ID: "seccomp/failure/row-4", Node: "w2", Kubelet: "1.37.2", APIServer: "1.37.2", CRIRuntime: "containerd 1.7.24", OCIRuntime: "vendor 0.1", Verdict: skew.Pass},
	}
	return Run{Name: "mixed", Results: rs}
}

// TestRuntimeColumns: one column per kubelet × runtime, the API server's
// results in each; the oracle is asked at the column's runtime.
func TestRuntimeColumns(t *testing.T) {
	rep := Build([]Run{mixedRun()})
	want := []Pair{{"1.37.2", "1.37.2", "containerd/1.7.24+runc/1.1.15"}, {"1.37.2", "1.37.2", "containerd/1.7.24+vendor/0.1"}}
	if len(rep.Pairs) != 2 || rep.Pairs[0] != want[0] || rep.Pairs[1] != want[1] {
		t.Fatalf("pairs %v, want %v", rep.Pairs, want)
	}
	if got := want[1].String(); got != "1.37.2/1.37.2@containerd/1.7.24+vendor/0.1" {
		t.Errorf("pair string %q", got)
	}
	n := 0
	for _, c := range rep.Cells {
		if c.ID == "seccomp/api/types" {
			n++
		}
		if c.ID == "seccomp/kubelet/enforce" && c.Pair == want[1] && c.Verdict != skew.Fail {
			t.Errorf("vendor cell %v", c.Verdict)
		}
	}
	if n != 2 {
		t.Errorf("the API server's result is in %d columns, want 2", n)
	}
}

// TestDiffAcrossRuntimes: "what changes if I move from runc to the vendor's
// runtime", within one mixed run.
func TestDiffAcrossRuntimes(t *testing.T) {
	rep := Build([]Run{mixedRun()})
	old, err := SelectRuntime(rep, "runc")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := SelectRuntime(rep, "+vendor")
	if err != nil {
		t.Fatal(err)
	}
	d := Compare("runc", old, "vendor", cur)
	if len(d.Changes) != 1 || d.Changes[0].Kind != NewlyFailing || d.Changes[0].ID != "seccomp/kubelet/enforce" || d.Same != 2 {
		t.Errorf("diff %+v (same %d), want one newly failing seccomp/kubelet/enforce and 2 unchanged", d.Changes, d.Same)
	}
	if _, err := SelectRuntime(rep, "cri-o"); err == nil {
		t.Error("a selector no result matches gave no error")
	}
}

// A staged result (reports.Result.Staged) is labelled "pass (staged)" in
// the matrix's cells, Markdown and HTML, and says what was staged.
func TestStagedCell(t *testing.T) {
	staged := "skewproof's restricted runtime handler skewproof-noseccomp"
	run := Run{Name: "s", Results: []reports.Result{
		{ID: "seccomp/failure/row-1", Node: "w1", Kubelet: "1.37.2", APIServer: "1.37.2", Verdict: skew.Pass, Staged: staged},
		{ID: "seccomp/failure/row-4", Node: "w1", Kubelet: "1.37.2", APIServer: "1.37.2", Verdict: skew.Pass},
	}}
	rep := Build([]Run{run})
	for _, c := range rep.Cells {
		want := "pass"
		if c.ID == "seccomp/failure/row-1" {
			want = "pass (staged)"
		}
		if c.Label() != want || c.Verdict != skew.Pass {
			t.Errorf("%s: label %q verdict %s, want %q, pass", c.ID, c.Label(), c.Verdict, want)
		}
	}
	var md, html strings.Builder
	if err := WriteMarkdown(&md, rep, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| `seccomp/failure/row-1` | pass (staged) |") {
		t.Errorf("Markdown lacks the staged cell:\n%s", md.String())
	}
	if err := WriteHTML(&html, rep, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`tabindex="0">pass (staged)</td>`, `<dd class="d-staged">observes skewproof&#39;s restricted runtime handler skewproof-noseccomp, not the runtime's own behaviour</dd>`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
}
