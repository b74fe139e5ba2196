package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP §Version Skew Strategy › Pod Creation.
var _ = Describe("[seccomp] pod creation", Label("seccomp", "create"), func() {
	h.SetUp(family)
	podAnn := skew.SeccompPodAnnotation
	ctrAnn := skew.SeccompContainerAnnotation(names.ContainerName)

	h.APIRule("seccomp/create/none", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "nothing set", Obs: t.Create(ctx, fx.Pod("none", fx.Unschedulable()))})
	})

	h.APIRule("seccomp/create/field-to-annotation", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "pod RuntimeDefault + container Localhost fields", Obs: t.Create(ctx, fx.Pod("fields", fx.Unschedulable(),
			fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
			fx.ContainerSeccomp(fx.Profile(localhost, names.SeccompLocalhostProfile))))})
	})

	h.APIRule("seccomp/create/annotation-to-field", func(ctx context.Context, t *h.Scenario) {
		subs := []h.Sub{{Name: "pod runtime/default + container localhost/<p> annotations", Obs: t.Create(ctx, fx.Pod("annotations", fx.Unschedulable(),
			fx.Annotation(podAnn, "runtime/default"),
			fx.Annotation(ctrAnn, "localhost/"+names.SeccompLocalhostProfile)))}}
		// The other annotation values of the catalogue: admitted like the
		// canonical case, and no field populated where the oracle says so.
		for _, v := range []string{"unconfined", "docker/default"} {
			subs = append(subs,
				h.Sub{Name: "pod annotation " + v, Want: h.Generic, Obs: t.Create(ctx, fx.Pod("pod-"+dns(v), fx.Unschedulable(), fx.Annotation(podAnn, v)))},
				h.Sub{Name: "container annotation " + v, Want: h.Generic, Obs: t.Create(ctx, fx.Pod("ctr-"+dns(v), fx.Unschedulable(), fx.Annotation(ctrAnn, v)))})
		}
		t.Judge(subs...)
	})

	h.APIRule("seccomp/create/match", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "pod annotation runtime/default + field RuntimeDefault", Obs: t.Create(ctx, fx.Pod("match", fx.Unschedulable(),
				fx.Annotation(podAnn, "runtime/default"), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))},
			h.Sub{Name: "container annotation unconfined + field Unconfined", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("ctr-match", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "unconfined"), fx.ContainerSeccomp(fx.Profile(unconfined, ""))))},
		)
	})

	h.APIRule("seccomp/create/mismatch", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "pod annotation runtime/default + field Unconfined", Obs: t.Create(ctx, fx.Pod("mismatch", fx.Unschedulable(),
				fx.Annotation(podAnn, "runtime/default"), fx.PodSeccomp(fx.Profile(unconfined, ""))))},
			h.Sub{Name: "container annotation unconfined + field RuntimeDefault", Obs: t.Create(ctx, fx.Pod("ctr-mismatch", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "unconfined"), fx.ContainerSeccomp(fx.Profile(runtimeDefault, ""))))},
		)
	})

	h.APIRule("seccomp/create/warning", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "pod and container annotations, no fields", Obs: t.Create(ctx, fx.Pod("warning", fx.Unschedulable(),
			fx.Annotation(podAnn, "runtime/default"),
			fx.Annotation(ctrAnn, "localhost/"+names.SeccompLocalhostProfile)))})
	})
})

// dns turns an annotation value into a name fragment.
func dns(v string) string {
	out := []byte(v)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			out[i] = '-'
		}
	}
	return string(out)
}
