package apparmor

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	fx "github.com/skewproof/skewproof/fixtures"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// featureEnabled reads the API server's kubernetes_feature_enabled metric
// for a gate: "1", "0", or "" when the server does not report the gate.
func featureEnabled(ctx context.Context, c kubernetes.Interface, gate string) (string, error) {
	b, err := c.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the API server's /metrics: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "kubernetes_feature_enabled{") && strings.Contains(l, `name="`+gate+`"`) {
			f := strings.Fields(l)
			return f[len(f)-1], nil
		}
	}
	return "", nil
}

// KEP-24 §Version Skew Strategy › Pod Creation (feature gate disabled);
// §Feature enablement and rollback. Where the gate is locked or gone the
// oracle makes the spec skip with that reason.
var _ = Describe("[apparmor] feature gate", Label("apparmor", "feature-gate"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/feature-gate", func(ctx context.Context, t *h.Scenario) {
		on, err := featureEnabled(ctx, t.F.ClientSet, "AppArmor")
		Expect(err).NotTo(HaveOccurred())
		if on != "0" {
			t.Skip(fmt.Sprintf("the AppArmor gate is not disabled on this API server v%s (kubernetes_feature_enabled=%q): run a cluster with --feature-gates AppArmor=false",
				h.Env.APIServer, on))
		}
		t.Judge(h.Sub{Name: "pod field, container field and annotation Localhost with the gate off", Obs: t.Create(ctx, fx.Pod("gate-off", fx.Unschedulable(),
			fx.PodAppArmor(fx.LocalhostAppArmor(profile)), fx.ContainerAppArmor(fx.LocalhostAppArmor(profile)),
			fx.Annotation(ctrAnn, "localhost/"+profile)))})
	})
})
