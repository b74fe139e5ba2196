package incluster

import (
	"errors"
	"github.com/skewproof/skewproof/runner/sonobuoy"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/skew"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestReadSettings(t *testing.T) {
	s, err := ReadSettings(env(map[string]string{
		sonobuoy.EnvFocus:           "seccomp",
		sonobuoy.EnvSkip:            "row-4",
		sonobuoy.EnvExtraArgs:       "--suites=seccomp,profiles --label-filter=smoke --timeout=5m --agent-image=r/a:1",
		sonobuoy.EnvExtraGinkgoArgs: "--focus=apparmor --procs=4 -v --label-filter=api",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Focus != "(seccomp)|(apparmor)" || s.Skip != "row-4" || s.LabelFilter != "(smoke) && (api)" ||
		s.Timeout != 5*time.Minute || s.AgentImage != "r/a:1" || strings.Join(s.Suites, ",") != "seccomp,profiles" || s.DryRun {
		t.Errorf("settings %+v", s)
	}
	if strings.Join(s.Ignored, " ") != "--procs=4 -v" {
		t.Errorf("ignored %q", s.Ignored)
	}
	if s, err := ReadSettings(env(map[string]string{sonobuoy.EnvDryRun: "true"})); err != nil || !s.DryRun || len(s.Suites) != 0 || s.Name != "in-cluster" {
		t.Errorf("defaults %+v, %v", s, err)
	}
	// No suite is every suite of the binary; whether it has those named is
	// asked of it (runner.ResolveSuites), not here.
	for _, bad := range []string{"--timeout=soon", "--unknown", "--timeout=0s", "--flake-attempts=0", "--allowed-not-ready-nodes=-1"} {
		if _, err := ReadSettings(env(map[string]string{sonobuoy.EnvExtraArgs: bad})); err == nil || !strings.Contains(err.Error(), sonobuoy.EnvExtraArgs) {
			t.Errorf("%s accepted: %v", bad, err)
		}
	}
}

// A run that failed without a failed spec shows as one failed test case:
// Sonobuoy judges by the report alone and counts an empty one as passed.
func TestAddRunFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), JUnitFile)
	if err := reports.WriteJUnitFile(path); err != nil {
		t.Fatal(err)
	}
	if err := addRunFailure(path, errors.New("no spec selected")); err != nil {
		t.Fatal(err)
	}
	suites, err := reports.ReadJUnitFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []reports.Result
	for _, s := range suites {
		rs = append(rs, s.Results...)
	}
	if len(rs) != 1 || rs[0].ID != RunFailureID || rs[0].Verdict != skew.Fail || !strings.Contains(rs[0].Failure, "no spec selected") {
		t.Errorf("results %+v", rs)
	}
}

// E2E_EXTRA_ARGS takes the flags with one dash or two, as the upstream e2e
// binary does; its defaults are the entrypoint's; a bad flag's error lists
// every flag it takes.
func TestReadSettingsExtraArgs(t *testing.T) {
	s, err := ReadSettings(env(map[string]string{sonobuoy.EnvExtraArgs: "-timeout=5m --allow-flaky -flake-attempts=3 --allowed-not-ready-nodes=1"}))
	if err != nil {
		t.Fatal(err)
	}
	want := runner.InClusterDefaults()
	want.Timeout, want.AllowFlaky, want.FlakeAttempts, want.AllowedNotReadyNodes = 5*time.Minute, true, 3, 1
	if s.SharedFlags != want {
		t.Errorf("flags %+v, want %+v", s.SharedFlags, want)
	}
	_, err = ReadSettings(env(map[string]string{sonobuoy.EnvExtraArgs: "--procs=4"}))
	var d runner.SharedFlags
	flags := ExtraArgsFlags(&d)
	if err == nil {
		t.Fatal("--procs accepted")
	}
	flags.VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(err.Error(), "--"+f.Name) {
			t.Errorf("the error %q does not name --%s", err, f.Name)
		}
	})
}
