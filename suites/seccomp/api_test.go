package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/skew"
)

const (
	unconfined     = corev1.SeccompProfileTypeUnconfined
	runtimeDefault = corev1.SeccompProfileTypeRuntimeDefault
	localhost      = corev1.SeccompProfileTypeLocalhost
)

// KEP §Proposal › API › Pod API; failure rows 5 and 6.
var _ = Describe("[seccomp] API validation", Label("seccomp", "api"), func() {
	setUp()
	apiRule("seccomp/api/types", func(ctx context.Context, t *scenario) {
		t.judge(
			sub{Name: "pod RuntimeDefault + container Localhost", Obs: t.create(ctx, fx.Pod("types", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
				fx.ContainerSeccomp(fx.Profile(localhost, skew.SeccompLocalhostProfile))))},
			sub{Name: "pod Unconfined", Want: generic, Obs: t.create(ctx, fx.Pod("pod-unconfined", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(unconfined, ""))))},
			sub{Name: "container Unconfined", Want: generic, Obs: t.create(ctx, fx.Pod("ctr-unconfined", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(unconfined, ""))))},
			sub{Name: "pod Localhost", Want: generic, Obs: t.create(ctx, fx.Pod("pod-localhost", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(localhost, profiles.DenyMkdir))))},
			sub{Name: "container RuntimeDefault", Want: generic, Obs: t.create(ctx, fx.Pod("ctr-runtimedefault", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(runtimeDefault, ""))))},
		)
	})

	apiRule("seccomp/api/localhost-profile-required", func(ctx context.Context, t *scenario) {
		// Sub-cases in the order of the oracle's message fragments.
		t.judge(
			sub{Name: "pod Localhost without localhostProfile", Obs: t.create(ctx, fx.Pod("no-profile", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(localhost, ""))))},
			sub{Name: "container RuntimeDefault with localhostProfile", Obs: t.create(ctx, fx.Pod("profile-other-type", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(runtimeDefault, profiles.DenyMkdir))))},
		)
	})

	apiRule("seccomp/api/localhost-path-invalid", func(ctx context.Context, t *scenario) {
		t.judge(
			sub{Name: "absolute /etc/x.json", Obs: t.create(ctx, fx.Pod("absolute", fx.Unschedulable(),
				fx.PodSeccomp(fx.Profile(localhost, "/etc/x.json"))))},
			sub{Name: "descending ../x.json", Obs: t.create(ctx, fx.Pod("descending", fx.Unschedulable(),
				fx.ContainerSeccomp(fx.Profile(localhost, "../x.json"))))},
		)
	})

	apiRule("seccomp/api/runtime-profile-invalid", func(ctx context.Context, t *scenario) {
		t.judge(
			sub{Name: "pod annotation runtime/default-audit", Obs: t.create(ctx, fx.Pod("pod-audit", fx.Unschedulable(),
				fx.Annotation(skew.SeccompPodAnnotation, "runtime/default-audit")))},
			sub{Name: "container annotation runtime/default-audit", Obs: t.create(ctx, fx.Pod("ctr-audit", fx.Unschedulable(),
				fx.Annotation(skew.SeccompContainerAnnotation(skew.ContainerName), "runtime/default-audit")))},
		)
	})
})
