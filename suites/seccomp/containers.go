package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// podDenyMkdir is the pod-level profile of the scenarios with several
// containers: the Localhost fixture that denies mkdir. Its effect cannot be
// mistaken for the runtime default's (which allows mkdir) or for an
// allow-all filter, so a container shows by behaviour that it inherited
// the pod's profile, not merely that it got some filter.
var podDenyMkdir = fx.PodSeccomp(fx.Profile(localhost, skew.SeccompLocalhostProfile))

// ownUnconfined is a container's own Unconfined field.
var ownUnconfined = fx.WithSeccomp(fx.Profile(unconfined, ""))

// observeMkdir observes a container of pod (an init container or a sidecar
// too) while it runs and shows by behaviour which profile it runs with:
// under the pod's deny-mkdir profile (podProfile) mkdir must fail with
// EPERM while other syscalls work; under a profile of its own (Unconfined)
// mkdir must work: the pod's profile must not reach it. A container that
// does not run is not probed; its observation then matches no expected
// outcome.
func observeMkdir(ctx context.Context, t *h.Scenario, pod, container string, podProfile bool) (observe.Observation, []string) {
	c := t.ObserveContainer(ctx, pod, container, false)
	obs := observe.Observation{Container: c}
	if c.State != skew.Running {
		return obs, nil
	}
	var must []string
	mkdirOK, mkdir := t.Try(ctx, pod, container, "mkdir", "mkdir /tmp/probe-dir")
	c.Behaviour = mkdir
	switch {
	case podProfile && (mkdirOK || !containsEPERM(mkdir)):
		must = append(must, "mkdir must fail with EPERM under the pod's "+skew.SeccompLocalhostProfile+": "+mkdir)
	case !podProfile && !mkdirOK:
		must = append(must, "mkdir must work under the container's own profile (the pod's must not apply): "+mkdir)
	}
	if podProfile {
		otherOK, other := t.Try(ctx, pod, container, "write+read", "echo x > /tmp/f && cat /tmp/f >/dev/null && ls / >/dev/null")
		c.Behaviour += ", " + other
		if !otherOK {
			must = append(must, "syscalls the profile does not deny must work: "+other)
		}
	}
	return obs, must
}

// release ends an init container that observeMkdir has observed (its
// sleeper exits 0 on SIGTERM), so that the pod's next container starts.
// Should it not end, the observation of the next one times out and fails
// the spec.
func release(ctx context.Context, t *h.Scenario, pod, container string) {
	_, _, _ = t.Exec(ctx, pod, container, "kill", "1")
}

// sub is one container of a scenario judged against its case of the
// oracle's observation.
func sub(name, c string, obs observe.Observation, must []string) h.Sub {
	return h.Sub{Name: name, Obs: obs, Want: observe.ForCase(c), Must: must}
}

// KEP §Proposal › API › Pod API: the pod-level field applies to every
// container of the pod; a container's own field overrides it.
var _ = Describe("[seccomp] every kind of container", Label("seccomp", "kubelet"), func() {
	h.SetUp(family)
	h.KubeletRule("seccomp/kubelet/init-containers", func(ctx context.Context, t *h.Scenario) {
		const pod = "init-containers"
		t.StartOnNode(ctx, pod, podDenyMkdir,
			fx.InitContainer(skew.InitContainerName), fx.InitContainer(skew.InitOwnContainerName, ownUnconfined))
		// Init containers run one after the other: each is observed while
		// it runs, then ended so that the next one starts.
		inherit, inheritMust := observeMkdir(ctx, t, pod, skew.InitContainerName, true)
		release(ctx, t, pod, skew.InitContainerName)
		own, ownMust := observeMkdir(ctx, t, pod, skew.InitOwnContainerName, false)
		release(ctx, t, pod, skew.InitOwnContainerName)
		t.Judge(
			sub("init container without a profile (pod Localhost deny-mkdir)", skew.CaseInit, inherit, inheritMust),
			sub("init container with its own Unconfined", skew.CaseInitOwn, own, ownMust),
		)
	})

	h.KubeletRule("seccomp/kubelet/sidecar", func(ctx context.Context, t *h.Scenario) {
		const pod = "sidecar"
		t.StartOnNode(ctx, pod, podDenyMkdir,
			fx.Sidecar(skew.SidecarContainerName), fx.Sidecar(skew.SidecarOwnContainerName, ownUnconfined))
		inherit, inheritMust := observeMkdir(ctx, t, pod, skew.SidecarContainerName, true)
		own, ownMust := observeMkdir(ctx, t, pod, skew.SidecarOwnContainerName, false)
		t.Judge(
			sub("sidecar without a profile (pod Localhost deny-mkdir)", skew.CaseSidecar, inherit, inheritMust),
			sub("sidecar with its own Unconfined", skew.CaseSidecarOwn, own, ownMust),
		)
	})

	h.KubeletRule("seccomp/kubelet/second-container", func(ctx context.Context, t *h.Scenario) {
		const pod = "second-container"
		t.StartOnNode(ctx, pod, podDenyMkdir, fx.ContainerSeccomp(fx.Profile(unconfined, "")), fx.Container(skew.SecondContainerName))
		own, ownMust := observeMkdir(ctx, t, pod, skew.ContainerName, false)
		second, secondMust := observeMkdir(ctx, t, pod, skew.SecondContainerName, true)
		t.Judge(
			sub("container app with its own Unconfined", skew.CaseOwn, own, ownMust),
			sub("container second without a profile (pod Localhost deny-mkdir)", skew.CaseSecond, second, secondMust),
		)
	})
})
