package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// These checks run a suite's own test binary (os.Args[0]) against a made-up
// cluster (SKEWPROOF_NODES; no API server is contacted). The suites call
// them from their unit tests.

// specName is "[<id>] … [LinuxOnly]" with " [node:<node> kubelet:v<version>]"
// for kubelet rules (SpecText).
var specName = regexp.MustCompile(`^\[([a-z]+/[^\]]+)\] .* \[LinuxOnly\]( \[node:(\S+) kubelet:v[^\]]+\])?$`)

// CheckDryRunListsTheCatalogue runs the family's specs (its label) of test
// function testFunc in Ginkgo's dry-run mode against a made-up cluster of two workers and checks
// that it consists of exactly the family's ids of the catalogue: API
// server rules once, kubelet rules once per worker, and nothing else (no
// spec of the e2e framework's own, no rejected spec text).
func CheckDryRunListsTheCatalogue(t *testing.T, family, testFunc string) {
	workers := []string{"w1", "w2"}
	report := filepath.Join(t.TempDir(), "report.json")
	out, err := RunFakeSuite(testFunc, "w1=1.34.4,w2=1.37.2", "-ginkgo.dry-run", "-ginkgo.label-filter", family, "-ginkgo.json-report", report)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if strings.Contains(out, senv.ResultLinePrefix) {
		t.Errorf("a dry run must not report results:\n%s", out)
	}
	suite, err := reports.ReadGinkgoReport(report)
	if err != nil {
		t.Fatalf("reading the dry run's report: %v\n%s", err, out)
	}

	want := map[string]bool{}
	for _, r := range skew.Rules() {
		if !strings.HasPrefix(r.ID, family+"/") {
			continue
		}
		if r.Component == skew.Kubelet {
			for _, w := range workers {
				want[r.ID+"@"+w] = true
			}
		} else {
			want[r.ID+"@"] = true
		}
	}
	got := map[string]bool{}
	for _, s := range suite.SpecReports {
		// Specs the label filter leaves out are listed as skipped.
		if s.LeafNodeType != types.NodeTypeIt || s.State != types.SpecStatePassed {
			continue
		}
		m := specName.FindStringSubmatch(s.LeafNodeText)
		if m == nil {
			t.Errorf("spec %q is not one of the catalogue's", s.FullText())
			continue
		}
		key := m[1] + "@" + m[3]
		if got[key] {
			t.Errorf("spec %q is listed twice", s.FullText())
		}
		got[key] = true
		for _, l := range []string{family, "LinuxOnly", strings.ReplaceAll(m[1], "/", "-")} {
			if !slices.Contains(s.Labels(), l) {
				t.Errorf("spec %q lacks label %q: %q", s.FullText(), l, s.Labels())
			}
		}
	}
	var missing, extra []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("dry run: missing %q, not in the catalogue %q", missing, extra)
	}
	if len(got) == 0 {
		t.Errorf("dry run listed no spec:\n%s", out)
	}
}

// CheckProgressLinePerSpec runs one spec (id) of the suite for real against
// the made-up cluster: it fails in the framework's set-up (there is no API
// server to talk to; nothing is contacted), and exactly one progress line
// for it must come out, with the catalogue id, as the runner expects; none
// from the framework's preview of the spec tree.
func CheckProgressLinePerSpec(t *testing.T, testFunc, id string) {
	out, err := RunFakeSuite(testFunc, "w1=1.34.4", "-ginkgo.label-filter", IDLabel(id))
	if err == nil {
		t.Fatalf("the spec passed without an API server:\n%s", out)
	}
	var lines []reports.Result
	for _, l := range strings.Split(out, "\n") {
		if r, ok := senv.ParseResultLine(l); ok {
			lines = append(lines, r)
		}
	}
	if len(lines) != 1 || lines[0].ID != id || lines[0].Verdict != skew.Fail {
		t.Errorf("progress lines %+v, want one failed %s:\n%s", lines, id, out)
	}
}

// RunFakeSuite runs testFunc of this test binary with SKEWPROOF_NODES
// (no cluster discovery) and the given Ginkgo flags, and returns its output.
func RunFakeSuite(testFunc, nodes string, args ...string) (string, error) {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run", fmt.Sprintf("^%s$", testFunc), "-test.v", "-ginkgo.no-color"}, args...)...)
	for _, kv := range os.Environ() {
		// No cluster: neither ours nor an in-cluster configuration.
		if !strings.HasPrefix(kv, senv.Prefix) && !strings.HasPrefix(kv, "KUBERNETES_SERVICE_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, senv.Nodes+"="+nodes, senv.APIServer+"=1.37.2")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
