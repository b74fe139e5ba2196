package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP-24 §Version Skew Strategy › Pod Update; §Proposal › Validation.
var _ = Describe("[apparmor] pod update", Label("apparmor", "update"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/update/immutable", func(ctx context.Context, t *h.Scenario) {
		t.MustCreate(ctx, fx.Pod("plain", fx.Unschedulable()))
		t.MustCreate(ctx, fx.Pod("annotated", fx.Unschedulable(), fx.Annotation(ctrAnn, "runtime/default")))
		// Sub-cases with the oracle's message fragment each shows:
		// 0 adding an annotation, 1 changing or removing one, 2 a field.
		subs := []h.Sub{
			{Name: "annotation added", Want: h.Fragment(0), Obs: t.Change(ctx, "plain", fx.Annotation(ctrAnn, "unconfined"))},
			{Name: "annotation changed", Want: h.Fragment(1), Obs: t.Change(ctx, "annotated", fx.Annotation(ctrAnn, "unconfined"))},
			{Name: "annotation removed", Want: h.Fragment(1), Obs: t.Change(ctx, "annotated", func(p *corev1.Pod) { delete(p.Annotations, ctrAnn) })},
		}
		// Before v1.30 there is no field to change: the API server drops
		// it as an unknown field.
		if t.AppArmorFields() {
			t.MustCreate(ctx, fx.Pod("field", fx.Unschedulable(), fx.ContainerAppArmor(fx.AppArmor(runtimeDefault, nil))))
			subs = append(subs,
				h.Sub{Name: "field added", Want: h.Fragment(2), Obs: t.Change(ctx, "plain", fx.ContainerAppArmor(fx.AppArmor(unconfined, nil)))},
				h.Sub{Name: "field changed", Want: h.Fragment(2), Obs: t.Change(ctx, "field", fx.ContainerAppArmor(fx.AppArmor(unconfined, nil)))},
				h.Sub{Name: "field removed", Want: h.Fragment(2), Obs: t.Change(ctx, "field", fx.ContainerAppArmor(nil))},
			)
		}
		t.Judge(subs...)
	})
})
