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
	h.SetUp()
	h.APIRule("apparmor/update/immutable", func(ctx context.Context, t *h.Scenario) {
		t.MustCreate(ctx, fx.Pod("plain", fx.Unschedulable()))
		t.MustCreate(ctx, fx.Pod("annotated", fx.Unschedulable(), fx.Annotation(ctrAnn, "runtime/default")))
		t.MustCreate(ctx, fx.Pod("field", fx.Unschedulable(), fx.ContainerAppArmor(fx.AppArmor(runtimeDefault, nil))))
		setAnn := func(v string) func(*corev1.Pod) {
			return func(p *corev1.Pod) {
				if p.Annotations == nil {
					p.Annotations = map[string]string{}
				}
				p.Annotations[ctrAnn] = v
			}
		}
		setField := func(pr *corev1.AppArmorProfile) func(*corev1.Pod) {
			return func(p *corev1.Pod) {
				if p.Spec.Containers[0].SecurityContext == nil {
					p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{}
				}
				p.Spec.Containers[0].SecurityContext.AppArmorProfile = pr
			}
		}
		// Sub-cases with the oracle's message fragment each shows:
		// 0 adding an annotation, 1 changing or removing one, 2 a field.
		t.Judge(
			h.Sub{Name: "annotation added", Want: h.Fragment(0), Obs: t.Change(ctx, "plain", setAnn("unconfined"))},
			h.Sub{Name: "annotation changed", Want: h.Fragment(1), Obs: t.Change(ctx, "annotated", setAnn("unconfined"))},
			h.Sub{Name: "annotation removed", Want: h.Fragment(1), Obs: t.Change(ctx, "annotated", func(p *corev1.Pod) { delete(p.Annotations, ctrAnn) })},
			h.Sub{Name: "field added", Want: h.Fragment(2), Obs: t.Change(ctx, "plain", setField(fx.AppArmor(unconfined, nil)))},
			h.Sub{Name: "field changed", Want: h.Fragment(2), Obs: t.Change(ctx, "field", setField(fx.AppArmor(unconfined, nil)))},
			h.Sub{Name: "field removed", Want: h.Fragment(2), Obs: t.Change(ctx, "field", setField(nil))},
		)
	})
})
