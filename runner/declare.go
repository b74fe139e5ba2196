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

// Declared are the declarations of the suites named, in that order; a
// suite the binary does not declare is an error.
func Declared(decls []senv.Suite, suites []string) ([]senv.Suite, error) {
	var out []senv.Suite
	for _, s := range suites {
		i := slices.IndexFunc(decls, func(d senv.Suite) bool { return d.Family == s })
		if i < 0 {
			return nil, fmt.Errorf("the suite binary has no suite %q", s)
		}
		out = append(out, decls[i])
	}
	return out, nil
}

// ResolveSuites are the suites a run runs: those named, each one the
// binary declares (decls), or every one when none is named. A
// certification judges every suite.
func ResolveSuites(decls []senv.Suite, named []string, certify bool) ([]string, error) {
	var all []string
	for _, d := range decls {
		all = append(all, d.Family)
	}
	if len(named) == 0 {
		return all, nil
	}
	if _, err := Declared(decls, named); err != nil {
		return nil, fmt.Errorf("--suites: %v (it has: %s)", err, strings.Join(all, ", "))
	}
	if certify && len(slices.Compact(slices.Sorted(slices.Values(named)))) != len(all) {
		return nil, fmt.Errorf("--certify judges every suite: give --suites %s (or leave it to the certification's default)", strings.Join(all, ","))
	}
	return named, nil
}

// fixturesOf is the set of fixtures the suites named declare; a suite the
// binary does not declare is an error.
func fixturesOf(decls []senv.Suite, suites []string) (map[string]bool, error) {
	chosen, err := Declared(decls, suites)
	if err != nil {
		return nil, err
	}
	need := map[string]bool{}
	for _, d := range chosen {
		for _, f := range d.Fixtures {
			need[f] = true
		}
	}
	return need, nil
}
