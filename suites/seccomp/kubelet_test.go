package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// userNSProbe creates a user namespace: the runtime default profile blocks
// unshare(CLONE_NEWUSER) for a container without CAP_SYS_ADMIN.
const userNSProbe = "unshare -U true"

// runOnNode creates a pod pinned to the scenario's node and observes its
// container.
func (t *scenario) runOnNode(ctx context.Context, name string, retries bool, opts ...fx.PodOption) observe.Observation {
	obs := t.startOnNode(ctx, name, opts...)
	obs.Container = t.observeContainer(ctx, name, skew.ContainerName, retries)
	return obs
}

// startOnNode creates a pod pinned to the scenario's node without waiting;
// observeContainer observes it later, so several pods start together.
func (t *scenario) startOnNode(ctx context.Context, name string, opts ...fx.PodOption) observe.Observation {
	return t.mustCreate(ctx, fx.Pod(name, append([]fx.PodOption{fx.OnNode(t.nodeName())}, opts...)...))
}

// KEP §Version Skew Strategy › Kubelet Backwards compatibility; §RuntimeProfile;
// §LocalhostProfile and §Seccomp root path configuration.
var _ = Describe("[seccomp] kubelet", Label("seccomp", "kubelet"), func() {
	setUp()
	kubeletRule("seccomp/kubelet/precedence", func(ctx context.Context, t *scenario) {
		t.judge(sub{Name: "pod field RuntimeDefault + container annotation unconfined", Obs: t.runOnNode(ctx, "precedence", false,
			fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
			fx.Annotation(skew.SeccompContainerAnnotation(skew.ContainerName), "unconfined"))})
	})

	kubeletRule("seccomp/kubelet/enforce", func(ctx context.Context, t *scenario) {
		rd := t.startOnNode(ctx, "runtime-default", fx.ContainerSeccomp(fx.Profile(runtimeDefault, "")))
		un := t.startOnNode(ctx, "unconfined", fx.ContainerSeccomp(fx.Profile(unconfined, "")))
		rd.Container = t.observeContainer(ctx, "runtime-default", skew.ContainerName, false)
		un.Container = t.observeContainer(ctx, "unconfined", skew.ContainerName, false)
		var must []string
		if rd.Container.State == skew.Running {
			blocked, desc := t.try(ctx, "runtime-default", skew.ContainerName, userNSProbe, userNSProbe)
			rd.Container.Behaviour = desc
			if blocked {
				must = append(must, "a syscall the runtime default profile blocks (unshare of a user namespace) succeeded")
			}
		}
		if un.Container.State == skew.Running {
			_, desc := t.try(ctx, "unconfined", skew.ContainerName, userNSProbe, userNSProbe)
			un.Container.Behaviour = desc
		}
		t.judge(
			sub{Name: "container RuntimeDefault", Obs: rd, Want: observe.ForCase(skew.CaseRuntimeDefault), Must: must},
			sub{Name: "container Unconfined", Obs: un, Want: observe.ForCase(skew.CaseUnconfined)},
		)
	})

	kubeletRule("seccomp/kubelet/localhost", func(ctx context.Context, t *scenario) {
		obs := t.runOnNode(ctx, "localhost", false, fx.ContainerSeccomp(fx.Profile(localhost, skew.SeccompLocalhostProfile)))
		var must []string
		if obs.Container.State == skew.Running {
			mkdirOK, mkdir := t.try(ctx, "localhost", skew.ContainerName, "mkdir", "mkdir /tmp/denied")
			otherOK, other := t.try(ctx, "localhost", skew.ContainerName, "write+read", "echo x > /tmp/f && cat /tmp/f >/dev/null && ls / >/dev/null")
			obs.Container.Behaviour = mkdir + ", " + other
			if mkdirOK || !containsEPERM(mkdir) {
				must = append(must, "mkdir must fail with EPERM under "+skew.SeccompLocalhostProfile+": "+mkdir)
			}
			if !otherOK {
				must = append(must, "syscalls the profile does not deny must work: "+other)
			}
		}
		t.judge(sub{Name: "container Localhost " + skew.SeccompLocalhostProfile, Obs: obs, Must: must})
	})
})

func containsEPERM(s string) bool {
	return contains(s, "Operation not permitted")
}
