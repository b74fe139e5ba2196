package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP §Version Skew Strategy › Pod Update (ephemeral containers).
var _ = Describe("[seccomp] ephemeral containers", Label("seccomp", "ephemeral"), func() {
	h.SetUp()
	h.APIRule("seccomp/ephemeral/no-annotation-sync", func(ctx context.Context, t *h.Scenario) {
		t.MustCreate(ctx, fx.Pod("target", fx.Unschedulable(), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))
		t.Judge(h.Sub{Name: "ephemeral container with field Unconfined", Obs: t.AddEphemeral(ctx, "target", fx.EphemeralContainer(fx.Profile(unconfined, "")))})
	})

	for _, c := range []struct {
		id      string
		profile *corev1.SeccompProfile
		what    string
	}{
		{"seccomp/ephemeral/inherit", nil, "pod RuntimeDefault, ephemeral container without a profile"},
		{"seccomp/ephemeral/override", fx.Profile(unconfined, ""), "pod RuntimeDefault, ephemeral container Unconfined"},
	} {
		h.KubeletRule(c.id, func(ctx context.Context, t *h.Scenario) {
			t.MustCreate(ctx, fx.Pod("target", fx.OnNode(t.NodeName()), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))
			app := t.ObserveContainer(ctx, "target", skew.ContainerName, false)
			Expect(app.State).To(Equal(skew.Running), "the target pod must run first: %s", app)
			obs := t.AddEphemeral(ctx, "target", fx.EphemeralContainer(c.profile))
			Expect(obs.Admission).To(Equal(skew.Accepted), "adding the ephemeral container: %v", obs.Errors)
			obs.Container = t.ObserveContainer(ctx, "target", skew.EphemeralContainerName, false)
			t.Judge(h.Sub{Name: c.what, Obs: obs})
		})
	}
})
