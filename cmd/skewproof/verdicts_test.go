package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// verdictTable renders results as one line per id × node, "id node
// verdict", sorted; node names lose the cluster's name (cluster-worker →
// <cluster>-worker) and API server rules say "api". It is what the
// integration tests pin (testdata/verdicts/*.txt), so that a pass that
// turns into a skip, or an id that disappears, fails make test.
func verdictTable(cluster string, rs []reports.Result) string {
	var lines []string
	for _, r := range rs {
		node := "api"
		if r.Node != "" {
			node = "<cluster>" + strings.TrimPrefix(r.Node, cluster)
		}
		lines = append(lines, fmt.Sprintf("%-44s %-28s %s", r.ID, node, r.Verdict))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// checkVerdicts compares results with the golden file
// testdata/verdicts/<name>.txt (-update rewrites it), listing every
// difference.
func checkVerdicts(t *testing.T, name, cluster string, rs []reports.Result) {
	t.Helper()
	got := verdictTable(cluster, rs)
	path := filepath.Join("testdata", "verdicts", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update after reviewing the run's verdicts)", err)
	}
	if diff := diffVerdicts(string(b), got); diff != "" {
		for _, r := range rs {
			if r.Verdict != skew.Pass && r.Verdict != skew.Deviation {
				t.Logf("%s %s on %s: %s %s", r.Verdict, r.ID, r.Node, r.Reason, reports.FirstLine(r.Failure))
			}
		}
		t.Errorf("verdicts per id × node differ from %s (review, then go test -tags integration -update):\n%s", path, diff)
	}
}

// diffVerdicts lists the lines only in want (-) and only in got (+).
func diffVerdicts(want, got string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		w[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		g[strings.Join(strings.Fields(l), " ")] = true
	}
	var out []string
	for l := range w {
		if !g[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range g {
		if !w[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][2:] < out[j][2:] || out[i][2:] == out[j][2:] && out[i] < out[j] })
	return strings.Join(out, "\n")
}

// A pass that turns into a skip, a lost spec and a new one all show.
func TestVerdictTableDiff(t *testing.T) {
	want := verdictTable("c", []reports.Result{
		{ID: "seccomp/api/types", Verdict: skew.Pass},
		{ID: "seccomp/kubelet/enforce", Node: "c-worker", Verdict: skew.Pass},
		{ID: "seccomp/kubelet/localhost", Node: "c-worker", Verdict: skew.Deviation},
	})
	if want != verdictTable("c", []reports.Result{
		{ID: "seccomp/kubelet/localhost", Node: "c-worker", Verdict: skew.Deviation},
		{ID: "seccomp/kubelet/enforce", Node: "c-worker", Verdict: skew.Pass},
		{ID: "seccomp/api/types", Verdict: skew.Pass},
	}) {
		t.Error("order matters to the table")
	}
	got := verdictTable("d", []reports.Result{
		{ID: "seccomp/api/types", Verdict: skew.Pass},
		{ID: "seccomp/kubelet/enforce", Node: "d-worker", Verdict: skew.Skip},
		{ID: "seccomp/kubelet/precedence", Node: "d-worker", Verdict: skew.Pass},
	})
	d := diffVerdicts(want, got)
	for _, line := range []string{
		"- seccomp/kubelet/enforce <cluster>-worker pass", "+ seccomp/kubelet/enforce <cluster>-worker skip",
		"- seccomp/kubelet/localhost <cluster>-worker deviation", "+ seccomp/kubelet/precedence <cluster>-worker pass",
	} {
		if !strings.Contains(d, line) {
			t.Errorf("diff lacks %q:\n%s", line, d)
		}
	}
	if strings.Contains(d, "seccomp/api/types") {
		t.Errorf("an unchanged line in the diff:\n%s", d)
	}
	if diffVerdicts(want, want) != "" {
		t.Error("a table differs from itself")
	}
}
