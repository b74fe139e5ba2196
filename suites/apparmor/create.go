package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// KEP-24 §Version Skew Strategy › Pod Creation, › Warnings; §Proposal ›
// Validation (1); §Removing annotation support.
var _ = Describe("[apparmor] pod creation", Label("apparmor", "create"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/create/none", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "nothing set", Obs: t.Create(ctx, fx.Pod("none", fx.Unschedulable()))})
	})

	h.APIRule("apparmor/create/field-to-annotation", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "pod-level Localhost field only", Obs: t.Create(ctx, fx.Pod("pod-field", fx.Unschedulable(),
			fx.PodAppArmor(fx.LocalhostAppArmor(profile))))})
	})

	h.APIRule("apparmor/create/annotation-to-field", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "container annotation localhost/<p> only", Obs: t.Create(ctx, fx.Pod("annotation", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "localhost/"+profile)))},
			h.Sub{Name: "container annotation runtime/default only", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("runtime-default", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "runtime/default")))},
			h.Sub{Name: "container annotation unconfined only", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("unconfined", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "unconfined")))},
		)
	})

	h.APIRule("apparmor/create/match", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "container annotation localhost/<p> + container field Localhost <p>", Obs: t.Create(ctx, fx.Pod("match", fx.Unschedulable(),
			fx.Annotation(ctrAnn, "localhost/"+profile), fx.ContainerAppArmor(fx.LocalhostAppArmor(profile))))})
	})

	// Only a container's own field corresponds to its annotation (KEP-24
	// §Proposal › Validation (1)); a container annotation differing from the
	// pod-level field is a container-level override, not a mismatch.
	h.APIRule("apparmor/create/mismatch", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "container annotation runtime/default + container field Localhost", Obs: t.Create(ctx, fx.Pod("mismatch", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "runtime/default"), fx.ContainerAppArmor(fx.LocalhostAppArmor(profile))))},
			h.Sub{Name: "container annotation localhost/other + container field Localhost <p>", Obs: t.Create(ctx, fx.Pod("profile-mismatch", fx.Unschedulable(),
				fx.Annotation(ctrAnn, "localhost/other"), fx.ContainerAppArmor(fx.LocalhostAppArmor(profile))))},
		)
	})

	h.APIRule("apparmor/create/warning", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "container annotation localhost/<p>, no field", Obs: t.Create(ctx, fx.Pod("warning", fx.Unschedulable(),
			fx.Annotation(ctrAnn, "localhost/"+profile)))})
	})

	h.KubeletRule("apparmor/create/empty-annotation", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: `container annotation ""`, Obs: t.RunOnNode(ctx, "empty", false, fx.Annotation(ctrAnn, ""))})
	})

	h.KubeletRule("apparmor/create/localhost-prefix", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "container annotation localhost/<p>", Obs: t.RunOnNode(ctx, "prefix", false,
			fx.Annotation(ctrAnn, "localhost/"+names.AppArmorLocalhostProfile))})
	})
})
