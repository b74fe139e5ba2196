package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
)

// KEP §Version Skew Strategy › Pod Creation.
var _ = Describe("[seccomp] pod creation", Label("seccomp", "create"), func() {
	setUp()
	podAnn := skew.SeccompPodAnnotation
	ctrAnn := skew.SeccompContainerAnnotation(skew.ContainerName)

	apiRule("seccomp/create/none", func(ctx context.Context, t *scenario) {
		t.judge(sub{Name: "nothing set", Obs: t.create(ctx, fx.Pod("none", fx.Unschedulable()))})
	})

	apiRule("seccomp/create/field-to-annotation", func(ctx context.Context, t *scenario) {
		t.judge(sub{Name: "pod RuntimeDefault + container Localhost fields", Obs: t.create(ctx, fx.Pod("fields", fx.Unschedulable(),
			fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
			fx.ContainerSeccomp(fx.Profile(localhost, skew.SeccompLocalhostProfile))))})
	})

	apiRule("seccomp/create/annotation-to-field", func(ctx context.Context, t *scenario) {
		subs := []sub{{Name: "pod runtime/default + container localhost/<p> annotations", Obs: t.create(ctx, fx.Pod("annotations", fx.Unschedulable(),
			fx.Annotation(podAnn, "runtime/default"),
			fx.Annotation(ctrAnn, "localhost/"+skew.SeccompLocalhostProfile)))}}
		// The other annotation values of the catalogue: admitted like the
		// canonical case, and no field populated where the oracle says so.
		for _, v := range []string{"unconfined", "docker/default"} {
			subs = append(subs,
				sub{Name: "pod annotation " + v, Want: generic, Obs: t.create(ctx, fx.Pod("pod-"+dns(v), fx.Unschedulable(), fx.Annotation(podAnn, v)))},
				sub{Name: "container annotation " + v, Want: generic, Obs: t.create(ctx, fx.Pod("ctr-"+dns(v), fx.Unschedulable(), fx.Annotation(ctrAnn, v)))})
		}
		t.judge(subs...)
	})

	apiRule("seccomp/create/match", func(ctx context.Context, t *scenario) {
		t.judge(
			sub{Name: "pod annotation runtime/default + field RuntimeDefault", Obs: t.create(ctx, fx.Pod("match", fx.Unschedulable(),
				fx.Annotation(podAnn, "runtime/default"), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))},
			sub{Name: "container annotation unconfined + field Unconfined", Want: generic, Obs: t.create(ctx, fx.Pod("ctr-match", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "unconfined"), fx.ContainerSeccomp(fx.Profile(unconfined, ""))))},
		)
	})

	apiRule("seccomp/create/mismatch", func(ctx context.Context, t *scenario) {
		t.judge(
			sub{Name: "pod annotation runtime/default + field Unconfined", Obs: t.create(ctx, fx.Pod("mismatch", fx.Unschedulable(),
				fx.Annotation(podAnn, "runtime/default"), fx.PodSeccomp(fx.Profile(unconfined, ""))))},
			sub{Name: "container annotation unconfined + field RuntimeDefault", Obs: t.create(ctx, fx.Pod("ctr-mismatch", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "unconfined"), fx.ContainerSeccomp(fx.Profile(runtimeDefault, ""))))},
		)
	})

	apiRule("seccomp/create/warning", func(ctx context.Context, t *scenario) {
		t.judge(sub{Name: "pod and container annotations, no fields", Obs: t.create(ctx, fx.Pod("warning", fx.Unschedulable(),
			fx.Annotation(podAnn, "runtime/default"),
			fx.Annotation(ctrAnn, "localhost/"+skew.SeccompLocalhostProfile)))})
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
