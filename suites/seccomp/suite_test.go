package seccomp

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/skewproof/skewproof/profiles"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// smoke is a quick subset (label "smoke") for integration tests: one API
// rule with warnings, the kubelet's enforcement and a localhost profile.
var smoke = map[string]bool{
	"seccomp/api/types":         true,
	"seccomp/create/warning":    true,
	"seccomp/kubelet/enforce":   true,
	"seccomp/kubelet/localhost": true,
}

func TestSeccomp(t *testing.T) {
	h.Run(t, h.Suite{Family: "seccomp", Smoke: smoke})
}

// Before the specs (first process only): the RuntimeClasses of failure row 1
// and the fixtures, which 'skewproof run' installs through the node agent
// of the fixtures namespace.
var _ = h.SuiteNodes(func(ctx SpecContext) {
	h.EnsureRuntimeClasses(ctx)
	c, err := profiles.NewCluster(h.Env.Config, profiles.FixturesNamespace)
	Expect(err).NotTo(HaveOccurred())
	Expect(profiles.CheckFixtures(ctx, c)).To(Succeed())
})
