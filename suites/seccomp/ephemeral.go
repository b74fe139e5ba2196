package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP §Version Skew Strategy › Pod Update (ephemeral containers).
var _ = Describe("[seccomp] ephemeral containers", Label("seccomp", "ephemeral"), func() {
	h.SetUp(family)
	h.APIRule("seccomp/ephemeral/no-annotation-sync", func(ctx context.Context, t *h.Scenario) {
		t.MustCreate(ctx, fx.Pod("target", fx.Unschedulable(), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))
		t.Judge(h.Sub{Name: "ephemeral container with field Unconfined", Obs: t.AddEphemeral(ctx, "target", fx.EphemeralContainer(fx.Profile(unconfined, "")))})
	})

	for _, c := range []struct {
		id      string
		profile *corev1.SeccompProfile
		what    string
	}{
		{"seccomp/ephemeral/inherit", nil, "pod Localhost deny-mkdir, ephemeral container without a profile"},
		{"seccomp/ephemeral/override", fx.Profile(unconfined, ""), "pod Localhost deny-mkdir, ephemeral container Unconfined"},
	} {
		// The pod's profile denies mkdir, which the runtime default allows:
		// an ephemeral container that inherits it shows that by behaviour
		// (skew.EffectSeccompDenyMkdir), not just by "Seccomp: 2".
		h.KubeletRule(c.id, func(ctx context.Context, t *h.Scenario) {
			obs := t.ObserveEphemeral(ctx, fx.Pod("target", fx.PodSeccomp(fx.Profile(localhost, names.SeccompLocalhostProfile))), fx.EphemeralContainer(c.profile))
			t.Judge(h.Sub{Name: c.what, Obs: obs})
		})
	}
})
