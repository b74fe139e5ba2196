package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/runner/schedule"
	senv "github.com/skewproof/skewproof/suites/env"
)

// Declarations asks the suite binary what its suites need (their
// declarations, senv.Declare): the fixtures the runner sets up and the API
// permissions their specs use. The runner knows no suite by name: a suite
// says what it needs where its specs are (harness.Suite).
func Declarations(ctx context.Context, binary string) ([]senv.Suite, error) {
	dir, err := os.MkdirTemp("", "skewproof-declare-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "suites.json")
	cmd := exec.CommandContext(ctx, binary, "-test.run", "^"+schedule.TestName+"$")
	cmd.Env = suiteEnv([]string{senv.Declare + "=" + path})
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("asking %s for its suites' declarations: %w: %s", binary, err, Tail(string(out), 5))
	}
	return senv.ReadSuites(path)
}

// ResolveSuites are the declarations (of decls, the binary's) of the suites
// a run runs: those named, or every one when none is named. A suite the
// binary does not declare is an error; a certification judges every suite.
func ResolveSuites(decls []senv.Suite, named []string, certify bool) ([]senv.Suite, error) {
	all := senv.Families(decls)
	if len(named) == 0 {
		return decls, nil
	}
	var out []senv.Suite
	for _, s := range named {
		i := slices.IndexFunc(decls, func(d senv.Suite) bool { return d.Family == s })
		if i < 0 {
			return nil, fmt.Errorf("--suites: the suite binary has no suite %q (it has: %s)", s, strings.Join(all, ", "))
		}
		if !slices.ContainsFunc(out, func(d senv.Suite) bool { return d.Family == s }) {
			out = append(out, decls[i])
		}
	}
	if certify && len(out) != len(decls) {
		return nil, fmt.Errorf("--certify judges every suite: give --suites %s (or leave it to the certification's default)", strings.Join(all, ","))
	}
	return out, nil
}

// fixturesOf is the set of fixtures the suites declare.
func fixturesOf(suites []senv.Suite) map[string]bool {
	need := map[string]bool{}
	for _, d := range suites {
		for _, f := range d.Fixtures {
			need[f] = true
		}
	}
	return need
}
