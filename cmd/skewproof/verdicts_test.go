package main

import (
	"fmt"
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
