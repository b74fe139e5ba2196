package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP-24 §Proposal › API (container overrides pod); §Monitoring requirements.
var _ = Describe("[apparmor] kubelet", Label("apparmor", "kubelet"), func() {
	h.SetUp(family)
	h.KubeletRule("apparmor/kubelet/precedence", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "pod Unconfined + container Localhost", Obs: t.RunOnNode(ctx, "precedence", false,
			fx.PodAppArmor(fx.AppArmor(unconfined, nil)), fx.ContainerAppArmor(fx.LocalhostAppArmor(profile)))})
	})

	h.KubeletRule("apparmor/kubelet/enforce", func(ctx context.Context, t *h.Scenario) {
		// The write the profile denies fails with EACCES: the harness
		// probes it (skew.EffectAppArmorDenyWrite).
		set, what := containerProfile(t, fx.LocalhostAppArmor(profile))
		obs := t.RunOnNode(ctx, "enforce", false, set)
		t.Judge(h.Sub{Name: what, Obs: obs})
	})
})
