package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP §Version Skew Strategy › PodTemplates.
var _ = Describe("[seccomp] pod templates", Label("seccomp", "template"), func() {
	h.SetUp(family)
	h.APIRule("seccomp/template/no-sync", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("nosync", fx.Annotation(skew.SeccompPodAnnotation, "runtime/default"))
		var subs []h.Sub
		for _, w := range fx.InertWorkloads("nosync", tmpl) {
			subs = append(subs, h.Sub{Name: w.Kind, Obs: t.ObserveWorkload(ctx, w.Object), Want: h.RePrefix(w.TemplatePrefix)})
		}
		t.Judge(subs...)
	})

	h.APIRule("seccomp/template/instantiation", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("inst", fx.Unschedulable(), fx.Annotation(skew.SeccompPodAnnotation, "runtime/default"))
		t.Judge(h.Sub{Name: "pod of a ReplicaSet whose template has only the annotation", Obs: t.ObserveInstantiation(ctx, "inst", tmpl)})
	})
})
