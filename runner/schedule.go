package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/skewproof/skewproof/runner/schedule"
)

// DryRun lists the specs the suites, label filter, focus and skip select,
// with their labels, and how many specs the binary has in all, by a dry
// run of the suite binary in env (the suite processes' environment, where
// the binary declares its kubelet rules per node of the run plan). With
// junit, the dry run also writes Ginkgo's JUnit report there (the
// in-cluster entrypoint's result in its dry-run mode). The one dry run of
// the suites: the runner plans its processes from it, and the in-cluster
// entrypoint checks its selection with it before it touches the cluster.
func DryRun(ctx context.Context, binary, dir string, suites []string, labelFilter, focus, skip string, env []string, junit string) ([]schedule.Spec, int, error) {
	f, err := os.CreateTemp(dir, ".specs-*.json")
	if err != nil {
		return nil, 0, err
	}
	report := f.Name()
	_ = f.Close()
	defer func() { _ = os.Remove(report) }()
	args := append(schedule.SuiteArgs(strings.Join(suites, " || "), labelFilter, focus, skip),
		"-ginkgo.dry-run", "-ginkgo.json-report", report)
	if junit != "" {
		args = append(args, "-ginkgo.junit-report", junit)
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, 0, fmt.Errorf("listing the specs to run (a dry run of %s): %w: %s", binary, err, Tail(string(out), 5))
	}
	return schedule.ReadDryRunSpecs(report)
}

// discover lists the specs the run selects (DryRun) in the suite
// processes' environment.
func (o Options) discover(ctx context.Context, dir string, env []string) ([]schedule.Spec, error) {
	specs, _, err := DryRun(ctx, o.SuiteBinary, dir, o.Suites, o.LabelFilter, o.Focus, o.Skip, suiteEnv(env), "")
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
