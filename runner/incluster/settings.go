package incluster

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/skewproof/skewproof/runner/schedule"

	"github.com/skewproof/skewproof/runner"
)

// Settings are what the entrypoint runs, read from the environment.
type Settings struct {
	Focus, Skip, LabelFilter string
	DryRun                   bool
	Suites                   []string
	AgentImage, Name         string
	Timeout                  time.Duration
	// FlakeAttempts: attempts of a failed spec (2: one retry).
	FlakeAttempts int
	// AllowFlaky tolerates flaky specs (runner.Options.AllowFlaky).
	AllowFlaky bool
	// AllowedNotReadyNodes: runner.Options.AllowedNotReadyNodes.
	AllowedNotReadyNodes int
	// Ignored lists the Ginkgo arguments that do not apply (the runner
	// plans its own processes).
	Ignored []string
}

// ReadSettings reads the E2E_* environment. E2E_EXTRA_ARGS takes
// skewproof's own flags (--suites, --label-filter, --agent-image,
// --timeout, --name); E2E_EXTRA_GINKGO_ARGS takes Ginkgo's --focus,
// --skip, --label-filter and --dry-run.
func ReadSettings(getenv func(string) string) (Settings, error) {
	s := Settings{Focus: getenv(EnvFocus), Skip: getenv(EnvSkip), DryRun: getenv(EnvDryRun) == "true"}
	fs := flag.NewFlagSet(EnvExtraArgs, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	suites := fs.String("suites", strings.Join(runner.Suites, ","), "")
	fs.StringVar(&s.LabelFilter, "label-filter", "", "")
	fs.StringVar(&s.AgentImage, "agent-image", "", "")
	fs.StringVar(&s.Name, "name", "in-cluster", "")
	fs.DurationVar(&s.Timeout, "timeout", 60*time.Minute, "")
	fs.IntVar(&s.FlakeAttempts, "flake-attempts", runner.DefaultFlakeAttempts, "")
	fs.BoolVar(&s.AllowFlaky, "allow-flaky", false, "")
	fs.IntVar(&s.AllowedNotReadyNodes, "allowed-not-ready-nodes", 0, "")
	const flags = "--suites, --label-filter, --agent-image, --timeout, --name, --flake-attempts, --allow-flaky, --allowed-not-ready-nodes"
	if err := fs.Parse(strings.Fields(getenv(EnvExtraArgs))); err != nil {
		return s, fmt.Errorf("%s: %v (flags: %s)", EnvExtraArgs, err, flags)
	}
	var err error
	if s.Suites, err = runner.ParseSuites(*suites); err != nil {
		return s, fmt.Errorf("%s: --suites: %v", EnvExtraArgs, err)
	}
	for _, a := range strings.Fields(getenv(EnvExtraGinkgoArgs)) {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "focus":
			s.Focus = join(s.Focus, val)
		case "skip":
			s.Skip = join(s.Skip, val)
		case "label-filter":
			s.LabelFilter = schedule.Select(s.LabelFilter, val)
		case "dry-run", "dryRun":
			s.DryRun = !hasVal || val == "true"
		case "flake-attempts", "flakeAttempts":
			if n, err := strconv.Atoi(val); err == nil && hasVal {
				s.FlakeAttempts = n
			} else {
				s.Ignored = append(s.Ignored, a)
			}
		default:
			s.Ignored = append(s.Ignored, a)
		}
	}
	// The checks the CLI makes too (runner.Options.Validate).
	shared := runner.Options{Mode: "in-cluster", Suites: s.Suites, Timeout: s.Timeout, FlakeAttempts: s.FlakeAttempts,
		AllowedNotReadyNodes: s.AllowedNotReadyNodes}
	if err := shared.Validate(); err != nil {
		return s, fmt.Errorf("%s: %v", EnvExtraArgs, err)
	}
	return s, nil
}

// join ORs two Ginkgo regular expressions.
func join(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return "(" + a + ")|(" + b + ")"
}
