package reports

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// Ginkgo itself, not a hand-made report: testdata/flakysuite run with
// --flake-attempts=2 gives one flaky spec (with its first failure), one
// pass, one fail, one that failed and was then skipped (fail, with the
// first failure kept) and one that returned without a verdict (fail).
func TestFlakyWithRealGinkgo(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a Ginkgo suite")
	}
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	cmd := exec.Command("go", "test", "./testdata/flakysuite", "-count=1",
		"-args", "-ginkgo.flake-attempts=2", "-ginkgo.json-report="+report)
	cmd.Env = append(os.Environ(), "FLAKY_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite has a spec that always fails, yet it passed:\n%s", out)
	}
	rep, rerr := ReadGinkgoReport(report)
	if rerr != nil {
		t.Fatalf("report: %v\n%s", rerr, out)
	}
	got := map[string]Result{}
	for _, sp := range rep.SpecReports {
		if r, ok := FromSpec(sp); ok {
			got[r.ID] = r
		}
	}
	if r := got["seccomp/kubelet/enforce"]; r.Verdict != skew.Flaky || r.Failure == "" {
		t.Errorf("fails once, then passes: %+v; want flaky with the first failure", r)
	} else if want := "first attempt: container never started"; !strings.Contains(r.Failure, want) {
		t.Errorf("flaky failure %q lacks %q", r.Failure, want)
	}
	if r := got["seccomp/api/types"]; r.Verdict != skew.Pass {
		t.Errorf("passes: %+v", r)
	}
	if r := got["seccomp/failure/row-4"]; r.Verdict != skew.Fail {
		t.Errorf("always fails: %+v", r)
	}
	if r := got["seccomp/kubelet/localhost"]; r.Verdict != skew.Fail || !strings.Contains(r.Failure, "first attempt: mkdir: ok") ||
		!strings.Contains(r.Failure, "then skipped on attempt 2 of 2: node went away") {
		t.Errorf("fails, then is skipped: %+v; want fail with the first failure and the skip", r)
	}
	if r := got["seccomp/kubelet/precedence"]; r.Verdict != skew.Fail || !strings.Contains(r.Failure, "without a verdict") {
		t.Errorf("returns without a verdict: %+v; want fail", r)
	}
}
