package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// KEP §Version Skew Strategy › Kubelet Backwards compatibility; §RuntimeProfile;
// §LocalhostProfile and §Seccomp root path configuration.
var _ = Describe("[seccomp] kubelet", Label("seccomp", "kubelet"), func() {
	h.SetUp(family)
	h.KubeletRule("seccomp/kubelet/precedence", func(ctx context.Context, t *h.Scenario) {
		// The pod-level profile is Localhost deny-mkdir, whose effect the
		// runtime default does not have (skew/rules_seccomp.go,
		// seccompDenyMkdirRuns): where the pod field applies, the harness
		// shows it by behaviour.
		t.Judge(h.Sub{Name: "pod field Localhost deny-mkdir + container annotation unconfined", Obs: t.RunOnNode(ctx, "precedence", false,
			fx.PodSeccomp(fx.Profile(localhost, names.SeccompLocalhostProfile)),
			fx.Annotation(skew.SeccompContainerAnnotation(names.ContainerName), "unconfined"))})
	})

	h.KubeletRule("seccomp/kubelet/enforce", func(ctx context.Context, t *h.Scenario) {
		rd := t.StartOnNode(ctx, "runtime-default", fx.ContainerSeccomp(fx.Profile(runtimeDefault, "")))
		un := t.StartOnNode(ctx, "unconfined", fx.ContainerSeccomp(fx.Profile(unconfined, "")))
		rd.Container = t.ObserveContainer(ctx, "runtime-default", names.ContainerName, false)
		un.Container = t.ObserveContainer(ctx, "unconfined", names.ContainerName, false)
		// The Unconfined container is the control of the runtime-default
		// probes, which the harness tries in the RuntimeDefault container
		// when it judges (skew.EffectSeccompRuntimeDefault).
		// Only a container without a filter (Seccomp: 0) is a control.
		if c := un.Container; c.State == skew.Running && c.SeccompMode != nil && *c.SeccompMode == 0 {
			un.Container.Behaviour = t.SeccompControlFrom(ctx, "unconfined", names.ContainerName)
		}
		t.Judge(
			h.Sub{Name: "container RuntimeDefault", Obs: rd, Want: observe.ForCase(skew.CaseRuntimeDefault)},
			h.Sub{Name: "container Unconfined", Obs: un, Want: observe.ForCase(skew.CaseUnconfined)},
		)
	})

	h.KubeletRule("seccomp/kubelet/localhost", func(ctx context.Context, t *h.Scenario) {
		// mkdir EPERM, the rest works: the harness probes the profile's
		// effect (skew.EffectSeccompDenyMkdir).
		obs := t.RunOnNode(ctx, "localhost", false, fx.ContainerSeccomp(fx.Profile(localhost, names.SeccompLocalhostProfile)))
		t.Judge(h.Sub{Name: "container Localhost " + names.SeccompLocalhostProfile, Obs: obs})
	})
})
