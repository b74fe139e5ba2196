package seccomp

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skewproof/skewproof/clusters"
	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// KEP §Design Details › Failure and Fallback Strategy, rows 1-4 (rows 5 and
// 6 are API rules: seccomp/api/runtime-profile-invalid and
// seccomp/api/localhost-path-invalid).
var _ = Describe("[seccomp] failure and fallback", Label("seccomp", "failure"), func() {
	h.SetUp(family)
	h.KubeletRule("seccomp/failure/row-1", func(ctx context.Context, t *h.Scenario) {
		obs := t.RunUnderHandler(ctx, "no-seccomp-runtime", clusters.NoSeccompHandler, false, fx.PodSeccomp(fx.Profile(runtimeDefault, "")))
		obs.Container.Behaviour = h.DescribeOutcome(t.Exp.Expected.AnyOf, obs.Container)
		t.Judge(h.Sub{Name: "RuntimeDefault under runtime handler " + clusters.NoSeccompHandler, Obs: obs})
	})

	h.KubeletRule("seccomp/failure/row-2", func(ctx context.Context, t *h.Scenario) {
		execve := t.StartOnNode(ctx, "deny-execve", fx.ContainerSeccomp(fx.Profile(localhost, profiles.DenyExecve)))
		mkdir := t.StartOnNode(ctx, "deny-mkdir", fx.ContainerSeccomp(fx.Profile(localhost, profiles.DenyMkdir)))
		logged := t.StartOnNode(ctx, "log-mkdir", fx.ContainerSeccomp(fx.Profile(localhost, profiles.LogMkdir)))

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
			switch line, err := kernelLogLine(ctx, t, `comm="`+comm+`"`); {
			case err != nil:
				logged.Container.Behaviour += "; kernel log not read: " + err.Error()
			case line == "":
				logMust = append(logMust, "SCMP_ACT_LOG: no kernel log line for the logged mkdir (comm="+comm+")")
			default:
				logged.Container.Behaviour += "; logged by the kernel: " + line
			}
		}
		execve.Container = t.ObserveContainer(ctx, "deny-execve", skew.ContainerName, false)
		execve.Container.Behaviour = strings.TrimSuffix("execve denied, the process cannot start; "+execve.Container.Behaviour, "; ")
		t.Judge(
			h.Sub{Name: "profile denies execve", Obs: execve, Want: observe.ForCase(skew.CaseDenyExecve)},
			h.Sub{Name: "profile denies mkdir", Obs: mkdir, Want: observe.ForCase(skew.CaseDenyMkdir), Must: mkdirMust},
			h.Sub{Name: "profile logs mkdir", Obs: logged, Want: observe.ForCase(skew.CaseLogMkdir), Must: logMust},
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
	}, Serial)
})

// kernelLogLine waits up to 10 s for a seccomp log line (audit type 1326)
// containing match in the kernel log of the scenario's node; it needs node
// access (kind nodes share the host kernel and can read its log).
func kernelLogLine(ctx context.Context, t *h.Scenario, match string) (string, error) {
	if h.Env.NodeAccess != "docker" {
		return "", fmt.Errorf("no node access (SKEWPROOF_NODE_ACCESS=%s)", h.Env.NodeAccess)
	}
	var line string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := clusters.Docker(ctx, "exec", t.NodeName(), "dmesg")
		if err != nil {
			return false, err
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "type=1326") && strings.Contains(l, match) {
				if j := strings.Index(l, "audit:"); j >= 0 {
					l = l[j:]
				}
				line = l
				return true, nil
			}
		}
		return false, nil
	})
	if wait.Interrupted(err) {
		// Not logged within 10 s: the caller reports the absence.
		return "", nil
	}
	return line, err
}
