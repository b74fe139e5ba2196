package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// userNSProbe creates a user namespace: the runtime default profile blocks
// unshare(CLONE_NEWUSER) for a container without CAP_SYS_ADMIN.
const userNSProbe = "unshare -U true"

// KEP §Version Skew Strategy › Kubelet Backwards compatibility; §RuntimeProfile;
// §LocalhostProfile and §Seccomp root path configuration.
var _ = Describe("[seccomp] kubelet", Label("seccomp", "kubelet"), func() {
	h.SetUp(family)
	h.KubeletRule("seccomp/kubelet/precedence", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "pod field RuntimeDefault + container annotation unconfined", Obs: t.RunOnNode(ctx, "precedence", false,
			fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
			fx.Annotation(skew.SeccompContainerAnnotation(skew.ContainerName), "unconfined"))})
	})

	h.KubeletRule("seccomp/kubelet/enforce", func(ctx context.Context, t *h.Scenario) {
		rd := t.StartOnNode(ctx, "runtime-default", fx.ContainerSeccomp(fx.Profile(runtimeDefault, "")))
		un := t.StartOnNode(ctx, "unconfined", fx.ContainerSeccomp(fx.Profile(unconfined, "")))
		rd.Container = t.ObserveContainer(ctx, "runtime-default", skew.ContainerName, false)
		un.Container = t.ObserveContainer(ctx, "unconfined", skew.ContainerName, false)
		var must []string
		if rd.Container.State == skew.Running {
			blocked, desc := t.Try(ctx, "runtime-default", skew.ContainerName, userNSProbe, userNSProbe)
			rd.Container.Behaviour = desc
			if blocked {
				must = append(must, "a syscall the runtime default profile blocks (unshare of a user namespace) succeeded")
			}
		}
		if un.Container.State == skew.Running {
			_, desc := t.Try(ctx, "unconfined", skew.ContainerName, userNSProbe, userNSProbe)
			un.Container.Behaviour = desc
		}
		t.Judge(
			h.Sub{Name: "container RuntimeDefault", Obs: rd, Want: observe.ForCase(skew.CaseRuntimeDefault), Must: must},
			h.Sub{Name: "container Unconfined", Obs: un, Want: observe.ForCase(skew.CaseUnconfined)},
		)
	})

	h.KubeletRule("seccomp/kubelet/localhost", func(ctx context.Context, t *h.Scenario) {
		obs := t.RunOnNode(ctx, "localhost", false, fx.ContainerSeccomp(fx.Profile(localhost, skew.SeccompLocalhostProfile)))
		var must []string
		if obs.Container.State == skew.Running {
			mkdirOK, mkdir := t.Try(ctx, "localhost", skew.ContainerName, "mkdir", "mkdir /tmp/denied")
			otherOK, other := t.Try(ctx, "localhost", skew.ContainerName, "write+read", "echo x > /tmp/f && cat /tmp/f >/dev/null && ls / >/dev/null")
			obs.Container.Behaviour = mkdir + ", " + other
			if mkdirOK || !containsEPERM(mkdir) {
				must = append(must, "mkdir must fail with EPERM under "+skew.SeccompLocalhostProfile+": "+mkdir)
			}
			if !otherOK {
				must = append(must, "syscalls the profile does not deny must work: "+other)
			}
		}
		t.Judge(h.Sub{Name: "container Localhost " + skew.SeccompLocalhostProfile, Obs: obs, Must: must})
	})
})

func containsEPERM(s string) bool {
	return contains(s, "Operation not permitted")
}
