package seccomp

import (
	"context"
	"errors"
	"slices"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/profiles"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// family is the catalogue family of this suite and its first spec label.
const family = "seccomp"

// smoke is a quick subset (label "smoke") for integration tests: one API
// rule with warnings, the kubelet's enforcement and a localhost profile.
var smoke = map[string]bool{
	"seccomp/api/types":         true,
	"seccomp/create/warning":    true,
	"seccomp/kubelet/enforce":   true,
	"seccomp/kubelet/localhost": true,
}

func init() {
	// The fixture seccomp profiles (deny-mkdir and the failure rows') on
	// every node, the nodes' kernel facts, and failure row 1's
	// RuntimeClasses.
	// Its API permissions: the scenarios', failure row 1's RuntimeClasses
	// and row 4's profile, installed through the fixtures' agent.
	h.Register(h.Suite{Family: family, Smoke: smoke, SetUp: setUp,
		Fixtures:    []string{senv.FixtureSeccompProfiles, senv.FixtureRuntimeClasses},
		Permissions: slices.Concat(h.ScenarioPermissions, nodefacts.RuntimeClassRules(), profiles.InstallerRules())})
}

// setUp runs before the suite's first spec: the RuntimeClasses of failure
// row 1 and a check of the fixtures, which 'skewproof run' installs
// through the node agent of the fixtures namespace.
func setUp(ctx context.Context) (func(context.Context) error, error) {
	cleanup, err := h.EnsureRuntimeClasses(ctx, family)
	if err != nil {
		return cleanup, err
	}
	c, err := profiles.NewCluster(h.Env.Config, profiles.FixturesNamespace)
	if err == nil {
		err = profiles.CheckFixtures(ctx, c)
	}
	if err != nil {
		return cleanup, errors.Join(err, cleanup(ctx))
	}
	return cleanup, nil
}
