package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP-24 §Version Skew Strategy › Pod Update (ephemeral containers);
// §Proposal › Validation (1: not for ephemeral containers).
var _ = Describe("[apparmor] ephemeral containers", Label("apparmor", "ephemeral"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/ephemeral/no-annotation-sync", func(ctx context.Context, t *h.Scenario) {
		t.MustCreate(ctx, fx.Pod("target", fx.Unschedulable(), fx.PodAppArmor(fx.LocalhostAppArmor(profile))))
		t.Judge(h.Sub{Name: "ephemeral container with field Unconfined", Obs: t.AddEphemeral(ctx, "target", fx.EphemeralContainerAppArmor(fx.AppArmor(unconfined, nil)))})
	})

	for _, c := range []struct {
		id      string
		profile *corev1.AppArmorProfile
		what    string
	}{
		{"apparmor/ephemeral/inherit", nil, "pod Localhost, ephemeral container without a profile"},
		{"apparmor/ephemeral/override", fx.AppArmor(unconfined, nil), "pod Localhost, ephemeral container Unconfined"},
	} {
		h.KubeletRule(c.id, func(ctx context.Context, t *h.Scenario) {
			obs := t.ObserveEphemeral(ctx, fx.Pod("target", fx.PodAppArmor(fx.LocalhostAppArmor(profile))), fx.EphemeralContainerAppArmor(c.profile))
			t.Judge(h.Sub{Name: c.what, Obs: obs})
		})
	}
})
