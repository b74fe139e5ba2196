package seccomp

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/clusters"
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

// Before the specs (first process only): the RuntimeClass of failure row 1
// and the fixtures, which 'skewproof run' installs through the node agent
// of the fixtures namespace.
var _ = h.SuiteNodes(func(ctx SpecContext) {
	Expect(ensureRuntimeClass(ctx)).To(Succeed())
	DeferCleanup(deleteRuntimeClass)
	c, err := profiles.NewCluster(h.Env.Config, profiles.FixturesNamespace)
	Expect(err).NotTo(HaveOccurred())
	Expect(profiles.CheckFixtures(ctx, c)).To(Succeed())
})

var createdRuntimeClass bool

// ensureRuntimeClass creates the RuntimeClass of the node images' runtime
// handler that drops seccomp (failure row 1), unless the runner did.
func ensureRuntimeClass(ctx context.Context) error {
	_, err := h.Env.Client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: clusters.NoSeccompHandler, Labels: map[string]string{h.SuiteLabel: "seccomp", h.RunLabel: h.RunID()}},
		Handler:    clusters.NoSeccompHandler,
	}, metav1.CreateOptions{})
	switch {
	case err == nil:
		createdRuntimeClass = true
	case apierrors.IsAlreadyExists(err):
	default:
		return fmt.Errorf("creating RuntimeClass %s: %w", clusters.NoSeccompHandler, err)
	}
	return nil
}

func deleteRuntimeClass(ctx SpecContext) {
	if createdRuntimeClass {
		_ = h.Env.Client.NodeV1().RuntimeClasses().Delete(ctx, clusters.NoSeccompHandler, metav1.DeleteOptions{})
	}
}
