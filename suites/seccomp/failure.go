package seccomp

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// KEP §Design Details › Failure and Fallback Strategy, rows 1-4 (rows 5 and
// 6 are API rules: seccomp/api/runtime-profile-invalid and
// seccomp/api/localhost-path-invalid).
var _ = Describe("[seccomp] failure and fallback", Label("seccomp", "failure", senv.LabelSlow), func() {
	h.SetUp(family)
	h.KubeletRule("seccomp/failure/row-1", func(ctx context.Context, t *h.Scenario) {
		obs := t.RunUnderHandler(ctx, "no-seccomp-runtime", nodefacts.NoSeccompHandler, false, fx.PodSeccomp(fx.Profile(runtimeDefault, "")))
		obs.Container.Behaviour = h.DescribeOutcome(t.Exp.Expected.AnyOf, obs.Container)
		t.Judge(h.Sub{Name: "RuntimeDefault under runtime handler " + nodefacts.NoSeccompHandler, Obs: obs})
	})

	h.KubeletRule("seccomp/failure/row-2", func(ctx context.Context, t *h.Scenario) {
		execve := t.StartOnNode(ctx, "deny-execve", fx.ContainerSeccomp(fx.Profile(localhost, profiles.DenyExecve)))
		mkdir := t.StartOnNode(ctx, "deny-mkdir", fx.ContainerSeccomp(fx.Profile(localhost, profiles.DenyMkdir)))
		logged := t.StartOnNode(ctx, "log-mkdir", fx.ContainerSeccomp(fx.Profile(localhost, profiles.LogMkdir)))
		reader := startKernelLogReader(ctx, t)

		mkdir.Container = t.ObserveContainer(ctx, "deny-mkdir", skew.ContainerName, false)
		var mkdirMust []string
		if mkdir.Container.State == skew.Running {
			ok, desc := t.Try(ctx, "deny-mkdir", skew.ContainerName, "mkdir", "mkdir /tmp/denied")
			mkdir.Container.Behaviour = "misbehaves, " + desc
			if ok || !containsEPERM(desc) {
				mkdirMust = append(mkdirMust, "the workload must misbehave (mkdir EPERM): "+desc)
			}
		}

		logged.Container = t.ObserveContainer(ctx, "log-mkdir", skew.ContainerName, false)
		var logMust []string
		var logUnmade *h.Unmade
		if logged.Container.State == skew.Running {
			// A copy of busybox under a unique name makes the kernel's log
			// line (comm="<name>") ours even when other nodes of the same
			// kernel run this spec at the same time; busybox runs argv[1]
			// as the applet when its name starts with "busybox" (15
			// characters: the whole name fits in comm).
			comm := "busybox" + rand.String(8)
			ok, desc := t.Try(ctx, "log-mkdir", skew.ContainerName, "mkdir",
				fmt.Sprintf("cp /bin/busybox /tmp/%s && /tmp/%s mkdir /tmp/logged", comm, comm))
			logged.Container.Behaviour = desc + " (SCMP_ACT_LOG allows the call)"
			if !ok {
				logMust = append(logMust, "SCMP_ACT_LOG must let mkdir succeed: "+desc)
			}
			line, unmade := reader.seccompLogLine(ctx, t, `comm="`+comm+`"`)
			switch {
			case unmade != nil:
				logUnmade = unmade
				logged.Container.Behaviour += "; kernel log not read: " + unmade.Reason
			case line == "":
				logMust = append(logMust, "SCMP_ACT_LOG: no kernel log line for the logged mkdir (comm="+comm+") within "+kernelLogWait.String())
			default:
				logged.Container.Behaviour += "; logged by the kernel: " + line
			}
		}
		execve.Container = t.ObserveContainer(ctx, "deny-execve", skew.ContainerName, false)
		execve.Container.Behaviour = strings.TrimSuffix("execve denied, the process cannot start; "+execve.Container.Behaviour, "; ")
		t.Judge(
			h.Sub{Name: "profile denies execve", Obs: execve, Want: observe.ForCase(skew.CaseDenyExecve)},
			h.Sub{Name: "profile denies mkdir", Obs: mkdir, Want: observe.ForCase(skew.CaseDenyMkdir), Must: mkdirMust},
			h.Sub{Name: "profile logs mkdir", Obs: logged, Want: observe.ForCase(skew.CaseLogMkdir), Must: logMust, Unmade: logUnmade},
		)
	})

	h.KubeletRule("seccomp/failure/row-3", func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "profile with an invalid action", Obs: t.RunOnNode(ctx, "invalid-action", true,
			fx.ContainerSeccomp(fx.Profile(localhost, profiles.InvalidAction)))})
	})

	// Row 4: a profile no node has (one name per node), then the same pod
	// once the agent has installed that profile. Serial: it installs and
	// removes a profile on every node.
	h.KubeletRule("seccomp/failure/row-4", func(ctx context.Context, t *h.Scenario) {
		fixtures, err := profiles.NewCluster(h.Env.Config, profiles.FixturesNamespace)
		Expect(err).NotTo(HaveOccurred())
		content, ok := profiles.SeccompByName(skew.SeccompLocalhostProfile)
		Expect(ok).To(BeTrue(), "profile %s is not a fixture", skew.SeccompLocalhostProfile)
		m := profiles.Manifest{Kind: api.KindSeccompProfile, Name: path.Base(skew.SeccompMissingProfilePrefix) + t.NodeName(),
			Content: string(content.Content)}
		localhostProfile := api.SeccompLocalhostProfile(profiles.FixturesNamespace, m.Name)
		Expect(localhostProfile).To(HavePrefix(skew.SeccompMissingProfilePrefix))
		pod := func() []fx.PodOption {
			return []fx.PodOption{fx.ContainerSeccomp(fx.Profile(localhost, localhostProfile))}
		}
		missing := t.RunOnNode(ctx, "missing-profile", true, pod()...)

		// The same pod on a node that has the file: installed through the
		// agent, removed again afterwards.
		DeferCleanup(func(ctx SpecContext) {
			Expect(profiles.Uninstall(ctx, fixtures, []profiles.Manifest{m}, time.Minute)).To(Succeed())
		})
		_, err = profiles.Install(ctx, fixtures, []profiles.Manifest{m}, nil, profiles.InstallOptions{Timeout: 2 * time.Minute})
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Client.CoreV1().Pods(t.NS).Delete(ctx, "missing-profile", metav1.DeleteOptions{})).To(Succeed())
		present := t.RunOnNode(ctx, "profile-present", false, pod()...)
		var must []string
		if present.Container.State != skew.Running {
			must = append(must, "the same pod must run once the profile is on the node: "+present.Container.String())
		}
		t.Judge(
			h.Sub{Name: "profile missing on the node", Obs: missing},
			h.Sub{Name: "profile present on the node", Obs: present, Want: h.Nothing, Must: must},
		)
	}, Serial, Label(senv.LabelOwnProcess, senv.LabelWaitsForGC))
})

// kernelLogPod reads the kernel log of the scenario's node for
// seccomp/failure/row-2: busybox's dmesg (syslog(2)) in a pod pinned to the
// node. The kernel log is the node kernel's, not a container's: kind nodes
// share the host's, a User-Mode Linux node has its own. No node access is
// needed, only a pod: with CAP_SYSLOG (which syslog(2) asks for where
// kernel.dmesg_restrict is 1) and without a seccomp filter (a runtime
// default profile may allow syslog(2) only with CAP_SYSLOG, or not at all);
// nothing of the node is mounted. The spec's namespace is privileged.
const kernelLogPod = "kernel-log"

// kernelLogWait is how long the kernel log is read again for the line.
const kernelLogWait = 10 * time.Second

// kernelLogReader is the reader pod of one spec; refused holds the API
// server's answer when it refused the pod.
type kernelLogReader struct{ refused []string }

// startKernelLogReader creates the reader pod without waiting for it.
func startKernelLogReader(ctx context.Context, t *h.Scenario) kernelLogReader {
	o := t.Create(ctx, fx.Pod(kernelLogPod, fx.OnNode(t.NodeName()), fx.ContainerSeccomp(fx.Profile(unconfined, "")), fx.AddCapabilities("SYSLOG")))
	if o.Admission != skew.Accepted {
		return kernelLogReader{refused: o.Errors}
	}
	return kernelLogReader{}
}

// seccompLogLine waits up to kernelLogWait for a seccomp log line (audit
// type 1326) containing match in the kernel log of the scenario's node; ""
// when there is none by then. Where the log cannot be read, or the kernel
// does not log SCMP_ACT_LOG, the check cannot be made: unmade says why.
// The reader pod is skewproof's own doing (SetUp: a failure on its own
// clusters); the kernel's configuration is the host's (a skip).
func (r kernelLogReader) seccompLogLine(ctx context.Context, t *h.Scenario, match string) (string, *h.Unmade) {
	node := t.NodeName()
	if r.refused != nil {
		return "", &h.Unmade{SetUp: true, Reason: fmt.Sprintf("the pod that reads the kernel log of node %s (CAP_SYSLOG, seccomp Unconfined) was refused: %s",
			node, strings.Join(r.refused, "; "))}
	}
	c := t.ObserveContainer(ctx, kernelLogPod, skew.ContainerName, false)
	if c.State != skew.Running {
		return "", &h.Unmade{SetUp: true, Reason: fmt.Sprintf("the pod that reads the kernel log of node %s does not run: %s", node, c)}
	}
	out, _, err := t.Exec(ctx, kernelLogPod, skew.ContainerName, "sh", "-c", kernelFactsScript)
	if err != nil {
		return "", &h.Unmade{SetUp: true, Reason: fmt.Sprintf("reading the seccomp and audit settings of node %s's kernel: %v", node, err)}
	}
	if why := kernelCannotLog(out); why != "" {
		return "", &h.Unmade{Reason: fmt.Sprintf("the kernel of node %s does not log SCMP_ACT_LOG: %s", node, why)}
	}
	var line string
	var readErr error
	err = wait.PollUntilContextTimeout(ctx, time.Second, kernelLogWait, true, func(ctx context.Context) (bool, error) {
		// pipefail: a dmesg that cannot read the log fails the command;
		// no line of type 1326 does not.
		out, stderr, err := t.Exec(ctx, kernelLogPod, skew.ContainerName, "sh", "-c", "set -o pipefail; dmesg | { grep -F type=1326 || true; }")
		if err != nil {
			readErr = fmt.Errorf("%v %s", err, strings.TrimSpace(stderr))
			return true, nil
		}
		line = seccompLine(out, match)
		return line != "", nil
	})
	switch {
	case readErr != nil:
		return "", &h.Unmade{SetUp: true, Reason: fmt.Sprintf("reading the kernel log of node %s (dmesg in pod %s with CAP_SYSLOG): %v", node, kernelLogPod, readErr)}
	case err != nil && !wait.Interrupted(err):
		return "", &h.Unmade{SetUp: true, Reason: fmt.Sprintf("reading the kernel log of node %s: %v", node, err)}
	}
	// Not logged within kernelLogWait: the caller reports the absence.
	return line, nil
}

// kernelFactsScript prints the kernel's seccomp actions_logged and whether
// it has audit support (/proc/self/loginuid exists only with CONFIG_AUDIT).
const kernelFactsScript = "echo actions_logged: $(cat /proc/sys/kernel/seccomp/actions_logged); " +
	"if [ -e /proc/self/loginuid ]; then echo audit: yes; else echo audit: no; fi"

// kernelCannotLog says why a kernel does not log SCMP_ACT_LOG, from
// kernelFactsScript's output; "" when it does. SCMP_ACT_LOG is logged
// through the audit subsystem, and only for the actions listed in
// kernel.seccomp.actions_logged (Documentation/userspace-api/seccomp_filter.rst,
// Documentation/admin-guide/sysctl/kernel.rst "seccomp").
func kernelCannotLog(facts string) string {
	var logged string
	audit := true
	for _, l := range strings.Split(facts, "\n") {
		if v, ok := strings.CutPrefix(l, "actions_logged:"); ok {
			logged = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "audit:"); ok {
			audit = strings.TrimSpace(v) != "no"
		}
	}
	switch {
	case !audit:
		return "it has no audit support (no /proc/self/loginuid: CONFIG_AUDIT is off), through which SCMP_ACT_LOG is logged"
	case logged != "" && !slices.Contains(strings.Fields(logged), "log"):
		return fmt.Sprintf("kernel.seccomp.actions_logged is %q, without \"log\"", logged)
	}
	return ""
}

// seccompLine is the first seccomp log line (audit type 1326) of a kernel
// log holding match, from "audit:" on; "" when there is none.
func seccompLine(log, match string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "type=1326") && strings.Contains(l, match) {
			if j := strings.Index(l, "audit:"); j >= 0 {
				l = l[j:]
			}
			return strings.TrimSpace(l)
		}
	}
	return ""
}
