package matrix

import (
	"bytes"
	"flag"
	"github.com/skewproof/skewproof/reports"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files under testdata/golden instead of
// comparing with them: go test ./reports/matrix -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name (or rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; create it with: go test ./reports/matrix -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (first difference at byte %d); if the change is intended: go test ./reports/matrix -update\n%s",
			name, path, firstDiff(got, want), excerpt(got, firstDiff(got, want)))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func excerpt(b []byte, at int) string {
	from, to := max(0, at-120), min(len(b), at+120)
	return "…" + string(b[from:to]) + "…"
}

// The fixture runs: a (apiserver 1.37.2, kubelets 1.34.4 and 1.37.2) and b
// (1.36.3/1.36.3) hold pass, fail, skip, deviation and flaky results; a2 is
// run a again with every kind of change.
var fixtureRuns = []string{"testdata/runs/a", "testdata/runs/b"}

// TestReportGolden: the four files of 'skewproof report' for runs a and b,
// and matrix.md and matrix.html of a2 against the baseline a.
func TestReportGolden(t *testing.T) {
	for _, c := range []struct {
		dir      string
		inputs   []string
		baseline string
		files    []string
	}{
		{"report", fixtureRuns, "", []string{JUnitFile, SummaryFile, MarkdownFile, HTMLFile}},
		{"report-baseline", []string{"testdata/runs/a2"}, "testdata/runs/a", []string{MarkdownFile, HTMLFile}},
	} {
		t.Run(c.dir, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if _, err := Generate(Options{Inputs: c.inputs, Out: out, Baseline: c.baseline}); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.files {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				golden(t, filepath.Join(c.dir, f), b)
			}
		})
	}
}

// TestDiffGolden: 'skewproof report diff a a2' in each format.
func TestDiffGolden(t *testing.T) {
	d, err := DiffPaths("testdata/runs/a", "testdata/runs/a2", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ext := map[reports.Format]string{reports.Text: "text", reports.JSON: "json", reports.Markdown: "md"}
	for _, f := range DiffFormats {
		var b bytes.Buffer
		if err := WriteDiff(&b, f, d); err != nil {
			t.Fatal(err)
		}
		golden(t, "diff."+ext[f], b.Bytes())
	}
}

// The output does not depend on anything but the inputs.
func TestReportDeterministic(t *testing.T) {
	var first []byte
	for range 3 {
		runs, err := Load(fixtureRuns...)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteHTML(&b, Build(runs), nil); err != nil {
			t.Fatal(err)
		}
		if first != nil && !bytes.Equal(first, b.Bytes()) {
			t.Fatal("two renderings of the same runs differ")
		}
		first = b.Bytes()
	}
}
