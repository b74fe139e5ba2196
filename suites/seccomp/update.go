package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// KEP §Version Skew Strategy › Pod Update.
var _ = Describe("[seccomp] pod update", Label("seccomp", "update", senv.LabelSlow), func() {
	h.SetUp(family)
	h.APIRule("seccomp/update/field-immutable", func(ctx context.Context, t *h.Scenario) {
		t.MustCreate(ctx, fx.Pod("immutable", fx.Unschedulable(),
			fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
			fx.ContainerSeccomp(fx.Profile(runtimeDefault, ""))))
		change := func(mutate func(*corev1.Pod)) observe.Observation {
			p, err := t.UpdatePod(ctx, "immutable", mutate)
			return t.ObserveWrite(ctx, p, err)
		}
		t.Judge(
			h.Sub{Name: "pod field RuntimeDefault → Unconfined", Want: h.AdmissionOnly, Obs: change(func(p *corev1.Pod) {
				p.Spec.SecurityContext.SeccompProfile = fx.Profile(unconfined, "")
			})},
			h.Sub{Name: "container field RuntimeDefault → Unconfined", Want: h.AdmissionOnly, Obs: change(func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext.SeccompProfile = fx.Profile(unconfined, "")
			})},
		)
	})

	h.KubeletRule("seccomp/update/annotation-ignored", func(ctx context.Context, t *h.Scenario) {
		// The pod field's profile is Localhost deny-mkdir: after the
		// restart its effect shows by behaviour (skew.EffectSeccompDenyMkdir).
		t.MustCreate(ctx, fx.Pod("annotated", fx.OnNode(t.NodeName()), fx.PodSeccomp(fx.Profile(localhost, names.SeccompLocalhostProfile))))
		before := t.ObserveContainer(ctx, "annotated", names.ContainerName, false)
		Expect(before.State).To(Equal(skew.Running), "the pod must run before its annotations change: %s", before)

		// Update the annotations to unconfined, then restart the container.
		obs := t.Change(ctx, "annotated", func(p *corev1.Pod) {
			fx.Annotation(skew.SeccompPodAnnotation, "unconfined")(p)
			fx.Annotation(skew.SeccompContainerAnnotation(names.ContainerName), "unconfined")(p)
		})
		if obs.Admission == skew.Accepted {
			obs.Container = t.RestartAndObserve(ctx, "annotated")
			obs.Container.Behaviour = "restarted after the annotation update"
		}
		t.Judge(h.Sub{Name: "annotations → unconfined, container restarted", Obs: obs})
	})
})
