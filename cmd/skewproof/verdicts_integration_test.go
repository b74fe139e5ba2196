//go:build integration

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skewproof/skewproof/internal/nodefacts"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// checkVerdicts compares results with the golden file
// testdata/verdicts/<name>.<host>.txt (-update rewrites it), listing every
// difference.
func checkVerdicts(t *testing.T, name, cluster string, rs []reports.Result) {
	t.Helper()
	got := verdictTable(cluster, rs)
	// The kind nodes share this host's kernel: with or without AppArmor,
	// the enforcement rows are judged or skipped there. One table each.
	host := "host-without-apparmor"
	if nodefacts.Host().AppArmor {
		host = "host-with-apparmor"
	}
	path := filepath.Join("testdata", "verdicts", name+"."+host+".txt")
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
