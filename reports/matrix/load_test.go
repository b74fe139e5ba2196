package matrix

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// Bad input: one clear error naming the path and the remedy, and nothing
// left behind (no --out directory, no temporary directory beside it).
func TestBadInputLeavesNothing(t *testing.T) {
	for _, c := range []struct {
		name     string
		inputs   []string
		baseline string
		want     []string
	}{
		{"missing", []string{"testdata/runs/a", "testdata/no-such-run"}, "", []string{"testdata/no-such-run does not exist", "--junit-dir"}},
		{"no junit", []string{"testdata/bad/nojunit"}, "", []string{"testdata/bad/nojunit holds no junit*.xml", "--junit-dir"}},
		{"malformed junit", []string{"testdata/runs/a", "testdata/bad/malformed"}, "", []string{"testdata/bad/malformed/junit-b.xml is not a readable JUnit file", "leave it out"}},
		{"malformed record", []string{"testdata/bad/badrecord"}, "", []string{"run.json", "remove testdata/bad/badrecord/run.json"}},
		{"bad baseline", []string{"testdata/runs/a"}, "testdata/bad/nojunit", []string{"--baseline: testdata/bad/nojunit holds no junit*.xml"}},
		{"no inputs", nil, "", []string{"no input given"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "report")
			_, err := Generate(Options{Inputs: c.inputs, Out: out, Baseline: c.baseline})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// --out: a file or a foreign non-empty directory is refused and kept; a
// previous report is replaced whole.
func TestOutDirectory(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "f")
	foreign := filepath.Join(parent, "foreign")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{file, foreign} {
		if _, err := Generate(Options{Inputs: fixtureRuns, Out: out}); err == nil {
			t.Errorf("--out %s accepted", out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "mine" {
		t.Errorf("a refused --out was changed")
	}
	out := filepath.Join(parent, "report")
	if _, err := Generate(Options{Inputs: fixtureRuns, Out: out}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "stale.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Generate(Options{Inputs: []string{"testdata/runs/b"}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale.txt")); err == nil {
		t.Errorf("the previous report was not replaced whole")
	}
	if len(g.Files) != 4 || len(g.Report.Runs) != 1 {
		t.Errorf("wrote %v for %d runs", g.Files, len(g.Report.Runs))
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 3 {
		t.Errorf("beside --out: %v (want f, foreign, report)", entries)
	}
}

// A report read back as input gives the same runs and cells; a flaky case
// with a failure element stays flaky; an API server result fills every
// kubelet pair of its run; the oracle's KEP reference and source are kept.
func TestReportReadsBack(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	g, err := Generate(Options{Inputs: fixtureRuns, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	back := Build(runs)
	if len(back.Runs) != 2 || back.Runs[0].Name != "a" || back.Runs[1].Name != "b" {
		t.Fatalf("runs read back: %d", len(back.Runs))
	}
	if d := Compare("first", g.Report, "again", back); len(d.Changes) != 0 || d.Same != len(g.Report.Cells) {
		t.Errorf("a report read back differs: %s", d.Headline())
	}
	cell := func(id, api, kub string) Cell {
		for _, c := range back.Cells {
			if c.ID == id && c.Pair == (Pair{APIServer: api, Kubelet: kub}) {
				return c
			}
		}
		t.Fatalf("no cell %s at %s/%s", id, api, kub)
		return Cell{}
	}
	if c := cell("seccomp/kubelet/localhost", "1.37.2", "1.37.2"); c.Verdict != skew.Flaky || !strings.Contains(c.Entries[0].Failure, "attempt 1") {
		t.Errorf("flaky cell: %+v", c)
	}
	for _, k := range []string{"1.34.4", "1.37.2"} {
		c := cell("seccomp/api/types", "1.37.2", k)
		if c.Scope != "apiserver" || c.Verdict != skew.Pass || !strings.HasPrefix(c.KEPRef, "KEP-135") || !strings.Contains(c.Source, "validation.go") || c.OracleReason == "" {
			t.Errorf("API server cell at kubelet %s: %+v", k, c)
		}
	}
	if c := cell("profiles/agent/ready", "1.37.2", "1.37.2"); c.KEPRef != "" || c.OracleReason != "" {
		t.Errorf("an id the oracle does not know got an oracle answer: %+v", c)
	}
}

// Two runs of one cluster, and several results in one cell: the worst wins.
func TestSameClusterTwiceWorstWins(t *testing.T) {
	runs, err := Load("testdata/runs/a", "testdata/runs/a2")
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Name != "a" || runs[1].Name != "a#2" {
		t.Errorf("run names %q %q", runs[0].Name, runs[1].Name)
	}
	for _, c := range Build(runs).Cells {
		if c.ID == "seccomp/kubelet/enforce" && c.Pair == (Pair{APIServer: "1.37.2", Kubelet: "1.34.4"}) {
			if c.Verdict != skew.Fail || len(c.Entries) != 2 {
				t.Errorf("pass + fail gave %s from %d results", c.Verdict, len(c.Entries))
			}
			return
		}
	}
	t.Error("cell missing")
}

// A run whose record says red (its suite process killed after its last
// result line, say) is red in the report too, though its JUnit file holds
// only passes; a green record adds nothing.
func TestRedRecordIsRedInTheReport(t *testing.T) {
	for _, c := range []struct {
		status int
		fails  int
	}{{0, 0}, {1, 1}} {
		dir := t.TempDir()
		res := reports.Result{Name: "[seccomp/api/types] x", ID: "seccomp/api/types", APIServer: "1.37.2", Verdict: skew.Pass}
		if err := reports.WriteJUnitFile(filepath.Join(dir, "junit-r.xml"), reports.Suite{Name: "seccomp", Cluster: "r", Results: []reports.Result{res}}); err != nil {
			t.Fatal(err)
		}
		rec := reports.Record{Cluster: "r", APIServer: "1.37.2", JUnit: "junit-r.xml"}
		var err error
		if c.status != 0 {
			err = errors.New("a suite failed outside the specs: signal: killed")
		}
		rec.SetVerdict(c.status, err)
		if err := reports.WriteRecord(dir, rec); err != nil {
			t.Fatal(err)
		}
		runs, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := reports.Count(runs[0].Results)[skew.Fail]
		if got != c.fails || (c.fails > 0 && !strings.Contains(runs[0].Results[1].Failure, "signal: killed")) {
			t.Errorf("exit status %d: %d failures in %+v, want %d", c.status, got, runs[0].Results, c.fails)
		}
		if len(runs[0].Suites) != 1+c.fails {
			t.Errorf("exit status %d: %d suites, want the failure as a suite of its own in the merged JUnit", c.status, len(runs[0].Suites))
		}
	}
}
