package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/runner/schedule"
)

// discover lists the specs the run selects (its suites, label filter,
// focus and skip), with their labels, by a dry run of the suite binary in
// the suite processes' environment: the binary declares its kubelet rules
// per node as the real processes will.
func (o Options) discover(ctx context.Context, dir string, env []string) ([]schedule.Spec, error) {
	report := filepath.Join(dir, fmt.Sprintf(".specs-%s.json", o.Name))
	defer func() { _ = os.Remove(report) }()
	args := append(schedule.SuiteArgs(strings.Join(o.Suites, " || "), o.LabelFilter, o.Focus, o.Skip),
		"-ginkgo.dry-run", "-ginkgo.json-report", report)
	cmd := exec.CommandContext(ctx, o.SuiteBinary, args...)
	cmd.Env = suiteEnv(env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("listing the specs to run (a dry run of %s): %w: %s", o.SuiteBinary, err, Tail(string(out), 5))
	}
	specs, _, err := schedule.ReadDryRunSpecs(report)
	return specs, err
}

// Tail is the last n lines of s (trimmed), for error messages that quote
// a command's output.
func Tail(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
