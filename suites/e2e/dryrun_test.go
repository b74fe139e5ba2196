package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/runner/schedule"

	"github.com/onsi/ginkgo/v2/types"

	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// TestDryRunListsTheCatalogue checks that the binary lists exactly the
// catalogue's seccomp/* and apparmor/* ids under their family's label (API
// rules once, kubelet rules per worker).
func TestDryRunListsTheCatalogue(t *testing.T) {
	for _, family := range []string{"seccomp", "apparmor"} {
		t.Run(family, func(t *testing.T) { h.CheckDryRunListsTheCatalogue(t, family, "TestE2E") })
	}
}

// TestEverySpecBelongsToOneSuite checks that each spec of the binary
// carries exactly one registered family as its label: the runner selects
// suites by it, so a spec without one would never run.
func TestEverySpecBelongsToOneSuite(t *testing.T) {
	families := h.Families()
	if want := []string{"apparmor", "profiles", "seccomp"}; !slices.Equal(families, want) {
		t.Fatalf("registered suites %q, want %q", families, want)
	}
	per := map[string]int{}
	for _, s := range dryRun(t, "w1=1.34.4").SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		var in []string
		for _, f := range families {
			if slices.Contains(s.Labels(), f) {
				in = append(in, f)
			}
		}
		if len(in) != 1 {
			t.Errorf("spec %q has families %q, want exactly one", s.FullText(), in)
			continue
		}
		if !strings.HasPrefix(s.LeafNodeText, "["+in[0]+"/") {
			t.Errorf("spec %q is labelled %s but its id is not", s.FullText(), in[0])
		}
		per[in[0]]++
	}
	for _, f := range families {
		if per[f] == 0 {
			t.Errorf("no spec of the %s suite in the binary", f)
		}
	}
}

// TestProgressLinePerSpec checks that one spec run gives exactly one
// progress line, with its catalogue id, as the runner expects.
func TestProgressLinePerSpec(t *testing.T) {
	for _, id := range []string{"seccomp/api/types", "apparmor/api/types"} {
		t.Run(id, func(t *testing.T) { h.CheckProgressLinePerSpec(t, "TestE2E", id) })
	}
}

// TestRunnerProcessesShareOutEverySpec checks that the suite processes the
// runner plans from the specs' labels (schedule.JobFilters: API rules, each
// worker's parts, the spec that floods the garbage collector apart) select
// every spec of the binary exactly once, as one process per suite does.
func TestRunnerProcessesShareOutEverySpec(t *testing.T) {
	const nodes = "w1=1.34.4,w2=1.37.2"
	list := func(t *testing.T, filter string) []string {
		var specs []string
		for _, s := range dryRun(t, nodes, "-ginkgo.label-filter", filter).SpecReports {
			// Specs the label filter leaves out are listed as skipped.
			if s.LeafNodeType == types.NodeTypeIt && s.State == types.SpecStatePassed {
				specs = append(specs, s.FullText())
			}
		}
		return specs
	}
	suites := []string{"seccomp", "apparmor", "profiles"}
	want := map[string]bool{}
	for _, s := range suites {
		for _, spec := range list(t, s) {
			want[spec] = true
		}
	}
	if len(want) < 50 {
		t.Fatalf("the suites list %d specs on two workers", len(want))
	}
	// The labels the runner plans from: its own dry run lists them so.
	var specs []schedule.SpecLabels
	for _, s := range dryRun(t, nodes, "-ginkgo.label-filter", strings.Join(suites, " || ")).SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && s.State == types.SpecStatePassed {
			specs = append(specs, s.Labels())
		}
	}
	for _, parallel := range []bool{true, false} {
		jobs := schedule.JobFilters(suites, parallel, specs)
		if parallel && len(jobs) < 10 {
			t.Errorf("parallel run in %d processes: %v", len(jobs), jobs)
		}
		in := map[string][]string{}
		for key, filter := range jobs {
			for _, spec := range list(t, filter) {
				in[spec] = append(in[spec], key)
			}
		}
		for spec := range want {
			if len(in[spec]) != 1 {
				t.Errorf("parallel %v: spec %q runs in processes %v, want exactly one", parallel, spec, in[spec])
			}
		}
		for spec := range in {
			if !want[spec] {
				t.Errorf("parallel %v: spec %q is not one of the suites'", parallel, spec)
			}
		}
	}
}

// dryRun runs the suite binary's specs as a dry run on the fake nodes and
// returns Ginkgo's report.
func dryRun(t *testing.T, nodes string, args ...string) types.Report {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	args = append([]string{"-ginkgo.dry-run", "-ginkgo.json-report", report}, args...)
	out, err := h.RunFakeSuite("TestE2E", nodes, args...)
	if err != nil {
		t.Fatalf("dry run %v: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rs []types.Report
	if err := json.Unmarshal(b, &rs); err != nil || len(rs) != 1 {
		t.Fatalf("reading the dry run's report: %v", err)
	}
	return rs[0]
}
