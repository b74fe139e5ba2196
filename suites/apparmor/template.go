package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP-24 §Version Skew Strategy › PodTemplates, › Warnings.
var _ = Describe("[apparmor] pod templates", Label("apparmor", "template"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/template/no-sync", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("nosync", fx.PodAppArmor(fx.LocalhostAppArmor(profile)), fx.Annotation(ctrAnn, "localhost/"+profile))
		var subs []h.Sub
		for _, w := range fx.InertWorkloads("nosync", tmpl) {
			subs = append(subs, h.Sub{Name: w.Kind, Obs: t.ObserveWorkload(ctx, w.Object), Want: h.RePrefix(w.TemplatePrefix)})
		}
		t.Judge(subs...)
	})

	h.APIRule("apparmor/template/instantiation", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("inst", fx.Unschedulable(), fx.Annotation(ctrAnn, "localhost/"+profile))
		t.Judge(h.Sub{Name: "pod of a ReplicaSet whose template has only the annotation", Obs: t.ObserveInstantiation(ctx, "inst", tmpl)})
	})
})
