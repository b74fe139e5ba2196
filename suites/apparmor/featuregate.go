package apparmor

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"
	. "github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/kubernetes"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
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

// gateState is what the API server says about a feature gate.
type gateState struct {
	// enabled is its kubernetes_feature_enabled value, "1" or "0"; "" when
	// unknown says why it is not known.
	enabled, unknown string
	// release: it is not known because the API server's release reports
	// no gates at all (a fact of the release, not of the cluster's set-up).
	release bool
}

// readGate asks the API server, of version v, whether gate is enabled.
func readGate(ctx context.Context, c kubernetes.Interface, v *version.Version, gate string) gateState {
	if release.MinorOf(v).Less(skew.FeatureMetricSince) {
		return gateState{release: true, unknown: fmt.Sprintf("kube-apiserver v%s reports no feature gates: kubernetes_feature_enabled is in its /metrics from v%s (cmd/kube-apiserver/app/server.go, AddMetrics)",
			v, skew.FeatureMetricSince)}
	}
	enabled, err := featureEnabled(ctx, c, gate)
	return gateFrom(gate, enabled, err)
}

// gateFrom is the state of gate from the metric's value or the error of
// reading it. The API server records every gate it knows in the metric
// (featuregate.AddMetrics), so an absent gate is not a fact of the release:
// the metrics are filtered, or come from something else.
func gateFrom(gate, enabled string, err error) gateState {
	switch {
	case err != nil:
		return gateState{unknown: err.Error() + " (the run needs get on the non-resource URL /metrics)"}
	case enabled == "":
		return gateState{unknown: fmt.Sprintf("the API server's /metrics has no kubernetes_feature_enabled{name=%q}", gate)}
	}
	return gateState{enabled: enabled}
}

// stopUnlessKnown stops the spec where the gate's state is not known:
// skipped where the API server's release reports no gates, else
// SetUpMissing (on skewproof's own cluster, whose kubeconfig may read
// /metrics, a failure; elsewhere a skip).
func (g gateState) stopUnlessKnown(t *h.Scenario, gate string) {
	if g.unknown == "" {
		return
	}
	why := fmt.Sprintf("cannot tell whether the %s feature gate is enabled on this API server v%s: %s", gate, h.Env.APIServer, g.unknown)
	if g.release {
		t.SkipFor(reports.SkipRelease, why) // the release gives no way to tell
	}
	t.SetUpMissing(why)
}

// KEP-24 §Version Skew Strategy › Pod Creation (feature gate disabled);
// §Feature enablement and rollback. Where the gate is locked or gone the
// oracle makes the spec skip with that reason.
var _ = Describe("[apparmor] feature gate", Label("apparmor", "feature-gate"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/feature-gate", func(ctx context.Context, t *h.Scenario) {
		g := readGate(ctx, t.F.ClientSet, h.Env.APIServer, "AppArmor")
		g.stopUnlessKnown(t, "AppArmor")
		if g.enabled != "0" {
			t.Skip(fmt.Sprintf("the AppArmor gate is not disabled on this API server v%s (kubernetes_feature_enabled=%q): run a cluster with --feature-gates AppArmor=false",
				h.Env.APIServer, g.enabled))
		}
		t.Judge(h.Sub{Name: "pod field, container field and annotation Localhost with the gate off", Obs: t.Create(ctx, fx.Pod("gate-off", fx.Unschedulable(),
			fx.PodAppArmor(fx.LocalhostAppArmor(profile)), fx.ContainerAppArmor(fx.LocalhostAppArmor(profile)),
			fx.Annotation(ctrAnn, "localhost/"+profile)))})
	})
})
