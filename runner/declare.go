package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/skewproof/skewproof/runner/schedule"
	senv "github.com/skewproof/skewproof/suites/env"
)

// declaredFixtures asks the suite binary what the suites of the run need
// set up (their declarations, senv.Declare), and returns the fixtures
// those of o.Suites declare. The runner knows no suite by name: a suite
// says what it needs where its specs are (harness.Suite.Fixtures).
func (o Options) declaredFixtures(ctx context.Context) (map[string]bool, error) {
	dir, err := os.MkdirTemp("", "skewproof-declare-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "suites.json")
	cmd := exec.CommandContext(ctx, o.SuiteBinary, "-test.run", "^"+schedule.TestName+"$")
	cmd.Env = suiteEnv([]string{senv.Declare + "=" + path})
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("asking %s for its suites' declarations: %w: %s", o.SuiteBinary, err, Tail(string(out), 5))
	}
	decls, err := senv.ReadSuites(path)
	if err != nil {
		return nil, err
	}
	return fixturesOf(decls, o.Suites)
}

// fixturesOf is the set of fixtures the suites named declare; a suite the
// binary does not declare is an error.
func fixturesOf(decls []senv.Suite, suites []string) (map[string]bool, error) {
	need := map[string]bool{}
	for _, s := range suites {
		i := slices.IndexFunc(decls, func(d senv.Suite) bool { return d.Family == s })
		if i < 0 {
			return nil, fmt.Errorf("the suite binary has no suite %q", s)
		}
		for _, f := range decls[i].Fixtures {
			need[f] = true
		}
	}
	return need, nil
}
