package incluster

import (
	"flag"
	"fmt"
	"github.com/skewproof/skewproof/runner/sonobuoy"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skewproof/skewproof/runner/schedule"

	"github.com/skewproof/skewproof/runner"
)

// Settings are what the entrypoint runs, read from the environment.
type Settings struct {
	// SharedFlags are E2E_EXTRA_ARGS: the flags 'skewproof run' takes
	// too, with the entrypoint's defaults (runner.InClusterDefaults).
	runner.SharedFlags
	Focus, Skip string
	DryRun      bool
	// Suites are SuiteList's.
	Suites []string
	// Ignored lists the Ginkgo arguments that do not apply (the runner
	// plans its own processes).
	Ignored []string
}

// ExtraArgsFlags are the flags of E2E_EXTRA_ARGS, bound to f with the
// entrypoint's defaults: runner.SharedFlags, declared once for the CLI and
// the entrypoint.
func ExtraArgsFlags(f *runner.SharedFlags) *pflag.FlagSet {
	*f = runner.InClusterDefaults()
	fs := pflag.NewFlagSet(sonobuoy.EnvExtraArgs, pflag.ContinueOnError)
	fs.SortFlags = false
	f.BindFlags(fs)
	return fs
}

// ReadSettings reads the E2E_* environment. E2E_EXTRA_ARGS takes
// skewproof's own flags (ExtraArgsFlags); E2E_EXTRA_GINKGO_ARGS takes
// Ginkgo's --focus, --skip, --label-filter, --dry-run and --flake-attempts.
func ReadSettings(getenv func(string) string) (Settings, error) {
	s := Settings{Focus: getenv(sonobuoy.EnvFocus), Skip: getenv(sonobuoy.EnvSkip), DryRun: getenv(sonobuoy.EnvDryRun) == "true"}
	flags := ExtraArgsFlags(&s.SharedFlags)
	// Parsed as Go's flag package parses: like the upstream e2e binary's
	// flags, they take one dash or two (-timeout=5m, --timeout=5m).
	fs := flag.NewFlagSet(sonobuoy.EnvExtraArgs, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags.CopyToGoFlagSet(fs)
	if err := fs.Parse(strings.Fields(getenv(sonobuoy.EnvExtraArgs))); err != nil {
		return s, fmt.Errorf("%s: %v (flags: %s)", sonobuoy.EnvExtraArgs, err, flagNames(flags))
	}
	s.Suites = runner.ParseSuites(s.SuiteList)
	for _, a := range strings.Fields(getenv(sonobuoy.EnvExtraGinkgoArgs)) {
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
		AllowedNotReadyNodes: s.AllowedNotReadyNodes, LabelFilter: s.LabelFilter, Focus: s.Focus, Skip: s.Skip, AllowFlaky: s.AllowFlaky, Certify: s.Certify}
	if err := shared.Validate(); err != nil {
		return s, fmt.Errorf("%s: %v", sonobuoy.EnvExtraArgs, err)
	}
	return s, nil
}

// flagNames lists the flags of fs in its order, as "--a, --b".
func flagNames(fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, ", ")
}

// join ORs two Ginkgo regular expressions.
func join(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return "(" + a + ")|(" + b + ")"
}
