package incluster

import (
	"context"
	"github.com/skewproof/skewproof/runner/sonobuoy"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/runner"
)

// fakeE2E stands for the e2e binary: it records its arguments and, for a
// dry run, writes a Ginkgo JSON report with two specs selected, one left
// out and a suite node (not a spec), and the JUnit report when asked.
const fakeE2E = `#!/bin/sh
dir=$(dirname "$0")
echo "$@" >"$dir/args"
[ -e "$dir/fail" ] && { echo "boom: the binary failed"; exit 3; }
report= junit= prev=
for a; do
	case "$prev" in -ginkgo.json-report) report=$a ;; -ginkgo.junit-report) junit=$a ;; esac
	prev=$a
done
cat >"$report" <<'JSON'
[{"SpecReports": [
 {"LeafNodeType": "BeforeSuite", "State": "passed"},
 {"LeafNodeType": "It", "State": "passed", "LeafNodeLabels": ["seccomp"]},
 {"LeafNodeType": "It", "State": "passed", "LeafNodeLabels": ["apparmor"]},
 {"LeafNodeType": "It", "State": "skipped", "LeafNodeLabels": ["profiles"]}
]}]
JSON
[ -n "$junit" ] && echo '<testsuites></testsuites>' >"$junit"
exit 0
`

func TestPlanCountsTheSelectedSpecs(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "e2e.test")
	if err := os.WriteFile(bin, []byte(fakeE2E), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Settings{Suites: []string{"seccomp", "apparmor"}, SharedFlags: runner.SharedFlags{LabelFilter: "smoke"}, Focus: "api"}
	will, total, err := plan(context.Background(), bin, s, nil, "")
	if err != nil || will != 2 || total != 3 {
		t.Fatalf("plan = %d of %d, %v; want 2 of 3 (the suite node is no spec)", will, total, err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	for _, want := range []string{"-ginkgo.dry-run", "-ginkgo.label-filter (seccomp || apparmor) && (smoke)", "-ginkgo.focus api"} {
		if !strings.Contains(string(args), want) {
			t.Errorf("arguments %q lack %q", args, want)
		}
	}
	if strings.Contains(string(args), "junit-report") {
		t.Errorf("a real run's plan asks for a JUnit report: %q", args)
	}
	// The entrypoint's own dry run: the binary's JUnit report is the result.
	junit := filepath.Join(dir, "junit_01.xml")
	if err := dryRunDone(junit); err == nil {
		t.Error("dryRunDone without a report: no error")
	}
	s.DryRun = true
	if _, _, err := plan(context.Background(), bin, s, nil, junit); err != nil {
		t.Fatal(err)
	}
	if err := dryRunDone(junit); err != nil {
		t.Errorf("dry run: %v", err)
	}
	// A binary that fails: its output's end is in the error.
	if err := os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := plan(context.Background(), bin, s, nil, junit); err == nil || !strings.Contains(err.Error(), "boom: the binary failed") {
		t.Errorf("a failing binary: %v", err)
	}
}

func TestE2EEnvRecordsTheSettings(t *testing.T) {
	for _, k := range []string{sonobuoy.EnvFocus, sonobuoy.EnvSkip, sonobuoy.EnvExtraArgs, sonobuoy.EnvExtraGinkgoArgs, sonobuoy.EnvDryRun} {
		t.Setenv(k, "")
	}
	t.Setenv(sonobuoy.EnvFocus, "seccomp")
	t.Setenv(sonobuoy.EnvExtraArgs, "--suites=seccomp")
	if got := strings.Join(e2eEnv(), " "); got != "E2E_FOCUS=seccomp E2E_EXTRA_ARGS=--suites=seccomp" {
		t.Errorf("e2eEnv = %q", got)
	}
}
