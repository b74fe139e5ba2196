package seccomp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/skewproof/skewproof/skew"
)

// specName is "[<id>] … [LinuxOnly]" with " [node:<node> kubelet:v<version>]"
// for kubelet rules (specText).
var specName = regexp.MustCompile(`^\[(seccomp/[^\]]+)\] .* \[LinuxOnly\]( \[node:(\S+) kubelet:v[^\]]+\])?$`)

// TestDryRunListsTheCatalogue runs this test binary's suite in Ginkgo's
// dry-run mode against a made-up cluster of two workers (no API server is
// contacted) and checks that it consists of exactly the seccomp/* ids of
// the catalogue: API server rules once, kubelet rules once per worker, and
// nothing else (no spec of the e2e framework's own, no rejected spec text).
func TestDryRunListsTheCatalogue(t *testing.T) {
	workers := []string{"w1", "w2"}
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSeccomp$", "-test.v",
		"-ginkgo.dry-run", "-ginkgo.no-color", "-ginkgo.json-report", report)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKEWPROOF_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SKEWPROOF_NODES=w1=1.34.4,w2=1.37.2", "SKEWPROOF_APISERVER=1.37.2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("dry run wrote no report: %v\n%s", err, out)
	}
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil || len(reports) != 1 {
		t.Fatalf("reading the dry run's report (%d suites): %v", len(reports), err)
	}

	want := map[string]bool{}
	for _, r := range skew.Rules() {
		if !strings.HasPrefix(r.ID, "seccomp/") {
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
	for _, s := range reports[0].SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
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
		for _, l := range []string{"seccomp", "LinuxOnly", strings.ReplaceAll(m[1], "/", "-")} {
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
