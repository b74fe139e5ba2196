package incluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/runner"

	"github.com/skewproof/skewproof/runner/schedule"
)

// plan lists the specs the settings select with a dry run of the e2e
// binary; in a dry run of the entrypoint, that run's JUnit report is the
// result.
func plan(ctx context.Context, bin string, s Settings, env []string, junit string) (will, total int, err error) {
	tmp, err := os.MkdirTemp("", "skewproof-plan-")
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	report := filepath.Join(tmp, "report.json")
	args := append(schedule.SuiteArgs(strings.Join(s.Suites, " || "), s.LabelFilter, s.Focus, s.Skip),
		"-ginkgo.dry-run", "-ginkgo.json-report", report)
	if s.DryRun {
		args = append(args, "-ginkgo.junit-report", junit)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("listing the specs: %v\n%s", err, runner.Tail(string(b), 20))
	}
	selected, total, err := schedule.ReadDryRun(report)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the spec list: %w", err)
	}
	will = len(selected)
	return will, total, nil
}

// dryRunDone checks that the dry run wrote its JUnit report (Ginkgo's,
// listing the specs).
func dryRunDone(junit string) error {
	if _, err := os.Stat(junit); err != nil {
		return errors.New("the dry run wrote no JUnit report")
	}
	return nil
}
