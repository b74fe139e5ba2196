package incluster

import (
	"context"
	"errors"
	"os"

	"github.com/skewproof/skewproof/runner"
)

// plan lists the specs the settings select (runner.DryRun), before the
// runner touches the cluster: how many, for "Will run", and whether any; in
// a dry run of the entrypoint, that run's JUnit report is the result.
func plan(ctx context.Context, bin string, s Settings, env []string, junit string) (will, total int, err error) {
	tmp, err := os.MkdirTemp("", "skewproof-plan-")
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	var dryJUnit string
	if s.DryRun {
		dryJUnit = junit
	}
	selected, total, err := runner.DryRun(ctx, bin, tmp, s.Suites, s.LabelFilter, s.Focus, s.Skip, env, dryJUnit)
	if err != nil {
		return 0, 0, err
	}
	return len(selected), total, nil
}

// dryRunDone checks that the dry run wrote its JUnit report (Ginkgo's,
// listing the specs).
func dryRunDone(junit string) error {
	if _, err := os.Stat(junit); err != nil {
		return errors.New("the dry run wrote no JUnit report")
	}
	return nil
}
