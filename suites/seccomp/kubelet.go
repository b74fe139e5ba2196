package seccomp

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// probe is a shell command that makes one syscall the runtime default
// profile blocks for a container without added capabilities, and that an
// unconfined container makes without any.
type probe struct{ syscall, shell string }

// enforceProbes are tried in the Unconfined container (the control: the
// command works there) and in the RuntimeDefault one (where the filter must
// make it fail). containerd's default profile (contrib/seccomp/
// seccomp_default.go, 1.7 and 2.x) and Docker's allow personality(2) only
// for PER_LINUX, PER_LINUX32, UNAME26, UNAME26|PER_LINUX32 and the query
// 0xffffffff, and unshare(2) only with CAP_SYS_ADMIN.
var enforceProbes = []probe{
	// busybox's linux64 -R calls personality(PER_LINUX|ADDR_NO_RANDOMIZE),
	// 0x40000: no namespace and no capability involved, so the control
	// works on every host.
	{syscall: "personality(ADDR_NO_RANDOMIZE)", shell: "linux64 -R true"},
	// unshare(CLONE_NEWUSER): the control fails where the host has user
	// namespaces off (user.max_user_namespaces=0, or a distribution's
	// switch for unprivileged ones); then this probe shows nothing.
	{syscall: "unshare(CLONE_NEWUSER)", shell: "unshare -U true"},
}

// probeResult is one probe tried in both containers.
type probeResult struct {
	probe
	controlOK, blockedOK bool   // the command succeeded: Unconfined, RuntimeDefault
	control, blocked     string // what each printed (Scenario.Try)
}

// enforceChecks judges the probes: every probe whose control works must
// fail under RuntimeDefault (must lists those that did not); a probe whose
// control fails too cannot show a block (noted in unmade). When no probe's
// control works, nothing shows that the filter blocks anything: made is
// false, and the check cannot be made.
func enforceChecks(rs []probeResult) (must, unmade []string, made bool) {
	for _, r := range rs {
		if !r.controlOK {
			unmade = append(unmade, fmt.Sprintf("%s fails unconfined too (%s)", r.syscall, r.control))
			continue
		}
		made = true
		if r.blockedOK {
			must = append(must, fmt.Sprintf("a syscall the runtime default profile blocks succeeded: %s (%s)", r.syscall, r.blocked))
		}
	}
	return must, unmade, made
}

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
		var unmade *h.Unmade
		if rd.Container.State == skew.Running && un.Container.State == skew.Running {
			var rs []probeResult
			var rdSeen, unSeen []string
			for _, p := range enforceProbes {
				r := probeResult{probe: p}
				r.controlOK, r.control = t.Try(ctx, "unconfined", skew.ContainerName, p.syscall, p.shell)
				r.blockedOK, r.blocked = t.Try(ctx, "runtime-default", skew.ContainerName, p.syscall, p.shell)
				rs = append(rs, r)
				rdSeen, unSeen = append(rdSeen, r.blocked), append(unSeen, r.control)
			}
			rd.Container.Behaviour, un.Container.Behaviour = strings.Join(rdSeen, ", "), strings.Join(unSeen, ", ")
			var notShown []string
			var made bool
			must, notShown, made = enforceChecks(rs)
			if !made {
				unmade = &h.Unmade{Reason: "no syscall the runtime default profile blocks could be shown blocked on node " + t.NodeName() +
					": the Unconfined control failed for every probe: " + strings.Join(notShown, "; ")}
			} else if len(notShown) > 0 {
				un.Container.Behaviour += " (not shown: " + strings.Join(notShown, "; ") + ")"
			}
		}
		t.Judge(
			h.Sub{Name: "container RuntimeDefault", Obs: rd, Want: observe.ForCase(skew.CaseRuntimeDefault), Must: must, Unmade: unmade},
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
