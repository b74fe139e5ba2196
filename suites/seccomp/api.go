package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

const (
	unconfined     = corev1.SeccompProfileTypeUnconfined
	runtimeDefault = corev1.SeccompProfileTypeRuntimeDefault
	localhost      = corev1.SeccompProfileTypeLocalhost
)

// KEP §Proposal › API › Pod API; failure rows 5 and 6.
var _ = Describe("[seccomp] API validation", Label("seccomp", "api"), func() {
	h.SetUp(family)
	h.APIRule("seccomp/api/types", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "pod RuntimeDefault + container Localhost", Obs: t.Create(ctx, fx.Pod("types", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
				fx.ContainerSeccomp(fx.Profile(localhost, names.SeccompLocalhostProfile))))},
			h.Sub{Name: "pod Unconfined", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("pod-unconfined", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(unconfined, ""))))},
			h.Sub{Name: "container Unconfined", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("ctr-unconfined", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(unconfined, ""))))},
			h.Sub{Name: "pod Localhost", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("pod-localhost", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(localhost, profiles.DenyMkdir))))},
			h.Sub{Name: "container RuntimeDefault", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("ctr-runtimedefault", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(runtimeDefault, ""))))},
		)
	})

	h.APIRule("seccomp/api/localhost-profile-required", func(ctx context.Context, t *h.Scenario) {
		// Sub-cases in the order of the oracle's message fragments.
		t.Judge(
			h.Sub{Name: "pod Localhost without localhostProfile", Obs: t.Create(ctx, fx.Pod("no-profile", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(localhost, ""))))},
			h.Sub{Name: "container RuntimeDefault with localhostProfile", Obs: t.Create(ctx, fx.Pod("profile-other-type", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(runtimeDefault, profiles.DenyMkdir))))},
		)
	})

	h.APIRule("seccomp/api/localhost-path-invalid", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "absolute /etc/x.json", Obs: t.Create(ctx, fx.Pod("absolute", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(localhost, "/etc/x.json"))))},
			h.Sub{Name: "descending ../x.json", Obs: t.Create(ctx, fx.Pod("descending", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(localhost, "../x.json"))))},
		)
	})

	h.APIRule("seccomp/api/runtime-profile-invalid", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "pod annotation runtime/default-audit", Obs: t.Create(ctx, fx.Pod("pod-audit", fx.Unschedulable(),
				fx.Annotation(skew.SeccompPodAnnotation, "runtime/default-audit")))},
			h.Sub{Name: "container annotation runtime/default-audit", Obs: t.Create(ctx, fx.Pod("ctr-audit", fx.Unschedulable(),
				fx.Annotation(skew.SeccompContainerAnnotation(names.ContainerName), "runtime/default-audit")))},
		)
	})
})
