package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP-24 §Failure and Fallback Strategy, rows 1-3, 5 and 6 (rows 4 and 7
// are API rules, in api_test.go).
var _ = Describe("[apparmor] failure and fallback", Label("apparmor", "failure"), func() {
	h.SetUp(family)
	h.KubeletRule("apparmor/failure/row-1", func(ctx context.Context, t *h.Scenario) {
		set, what := containerProfile(t, fx.LocalhostAppArmor(profile))
		obs := t.RunUnderHandler(ctx, "no-apparmor-runtime", nodefacts.NoAppArmorHandler, false, set)
		obs.Container.Behaviour = h.DescribeOutcome(t.Exp.Expected.AnyOf, obs.Container)
		t.Judge(h.Sub{Name: what + " under runtime handler " + nodefacts.NoAppArmorHandler, Obs: obs})
	})

	h.KubeletRule("apparmor/failure/row-2", func(ctx context.Context, t *h.Scenario) {
		// Each allowed outcome is judged by what the workload shows: in
		// enforce mode the write fails with EACCES; in complain mode it
		// succeeds and a kernel log line apparmor="ALLOWED" is read (or the
		// check is not made). The harness probes both
		// (skew.EffectAppArmorDenyWrite, EffectAppArmorComplainDenyWrite)
		// before the outcome is named.
		set, what := containerProfile(t, fx.LocalhostAppArmor(profile))
		obs := t.RunOnNode(ctx, "deny-write", false, set)
		sub := h.Sub{Name: what + ": the profile denies writes, the workload writes", Obs: obs}
		t.ProveEffects(ctx, sub)
		obs.Container.Behaviour = h.DescribeOutcome(t.Exp.Expected.AnyOf, obs.Container)
		t.Judge(sub)
	})

	h.KubeletRule("apparmor/failure/row-3", func(ctx context.Context, t *h.Scenario) {
		set, what := containerProfile(t, fx.LocalhostAppArmor(names.AppArmorNotLoadedProfile))
		t.Judge(h.Sub{Name: what + ", a profile not loaded on the node", Obs: t.RunOnNode(ctx, "not-loaded", true, set)})
	})

	h.KubeletRule("apparmor/failure/row-5", func(ctx context.Context, t *h.Scenario) {
		set, what := containerProfile(t, fx.LocalhostAppArmor(profile))
		field := t.StartOnNode(ctx, "localhost-field", set)
		ann := t.StartOnNode(ctx, "runtime-default-annotation", fx.Annotation(ctrAnn, "runtime/default"))
		field.Container = t.ObserveContainer(ctx, "localhost-field", names.ContainerName, false)
		ann.Container = t.ObserveContainer(ctx, "runtime-default-annotation", names.ContainerName, false)
		t.Judge(
			h.Sub{Name: what, Obs: field, Want: containerOnly},
			h.Sub{Name: "container annotation runtime/default", Obs: ann, Want: containerOnly},
		)
	})

	h.KubeletRule("apparmor/failure/row-6", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "no profile set", Obs: t.RunOnNode(ctx, "no-profile", false)})
	})
})

// containerOnly keeps the container outcome of the oracle's observation.
func containerOnly(o skew.Observation) skew.Observation {
	return skew.Observation{Summary: o.Summary, NotApplicable: o.NotApplicable, Container: o.Container, AnyOf: o.AnyOf}
}
