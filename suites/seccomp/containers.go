package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// podDenyMkdir is the pod-level profile of the scenarios with several
// containers: the Localhost fixture that denies mkdir. Its effect cannot be
// mistaken for the runtime default's (which allows mkdir) or for an
// allow-all filter, so a container shows by behaviour that it inherited
// the pod's profile, not merely that it got some filter.
var podDenyMkdir = fx.PodSeccomp(fx.Profile(localhost, names.SeccompLocalhostProfile))

// ownUnconfined is a container's own Unconfined field.
var ownUnconfined = fx.WithSeccomp(fx.Profile(unconfined, ""))

// mkdirs is what a container under its own Unconfined must be able to do:
// the pod's deny-mkdir profile must not reach it.
var mkdirs = &h.Probe{Label: "mkdir", Shell: "mkdir /tmp/probe-dir"}

// release ends an init container that ObserveRunning has observed (its
// sleeper exits 0 on SIGTERM), so that the pod's next container starts.
// Should it not end, the observation of the next one times out and fails
// the spec.
func release(ctx context.Context, t *h.Scenario, pod, container string) {
	_, _, _ = t.Exec(ctx, pod, container, "kill", "1")
}

// KEP §Proposal › API › Pod API: the pod-level field applies to every
// container of the pod; a container's own field overrides it.
var _ = Describe("[seccomp] every kind of container", Label("seccomp", "kubelet"), func() {
	h.SetUp(family)
	h.KubeletRule("seccomp/kubelet/init-containers", func(ctx context.Context, t *h.Scenario) {
		const pod = "init-containers"
		t.StartOnNode(ctx, pod, podDenyMkdir,
			fx.InitContainer(names.InitContainerName), fx.InitContainer(names.InitOwnContainerName, ownUnconfined))
		// Init containers run one after the other: each is observed while
		// it runs, then ended so that the next one starts.
		inherit := t.ObserveRunning(ctx, pod, names.InitContainerName, skew.CaseInit, "init container without a profile (pod Localhost deny-mkdir)", nil)
		release(ctx, t, pod, names.InitContainerName)
		own := t.ObserveRunning(ctx, pod, names.InitOwnContainerName, skew.CaseInitOwn, "init container with its own Unconfined", mkdirs)
		release(ctx, t, pod, names.InitOwnContainerName)
		t.Judge(inherit, own)
	})

	h.KubeletRule("seccomp/kubelet/sidecar", func(ctx context.Context, t *h.Scenario) {
		const pod = "sidecar"
		t.StartOnNode(ctx, pod, podDenyMkdir,
			fx.Sidecar(names.SidecarContainerName), fx.Sidecar(names.SidecarOwnContainerName, ownUnconfined))
		t.Judge(
			t.ObserveRunning(ctx, pod, names.SidecarContainerName, skew.CaseSidecar, "sidecar without a profile (pod Localhost deny-mkdir)", nil),
			t.ObserveRunning(ctx, pod, names.SidecarOwnContainerName, skew.CaseSidecarOwn, "sidecar with its own Unconfined", mkdirs),
		)
	})

	h.KubeletRule("seccomp/kubelet/second-container", func(ctx context.Context, t *h.Scenario) {
		const pod = "second-container"
		t.StartOnNode(ctx, pod, podDenyMkdir, fx.ContainerSeccomp(fx.Profile(unconfined, "")), fx.Container(names.SecondContainerName))
		t.Judge(
			t.ObserveRunning(ctx, pod, names.ContainerName, skew.CaseOwn, "container app with its own Unconfined", mkdirs),
			t.ObserveRunning(ctx, pod, names.SecondContainerName, skew.CaseSecond, "container second without a profile (pod Localhost deny-mkdir)", nil),
		)
	})
})
