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

	"github.com/skewproof/skewproof/clusters"
	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// skip records a skip with its reason and stops the spec.
func (t *scenario) skip(reason string) {
	t.result.Verdict, t.result.Reason = reports.Skip, reason
	t.record()
	Skip(reason)
}

// describeOutcome names the allowed outcome (of the oracle's AnyOf) that
// the container showed.
func describeOutcome(alts []skew.ContainerOutcome, c *observe.Container) string {
	if c == nil {
		return ""
	}
	if i := observe.WhichOf(alts, *c); i >= 0 {
		return "allowed outcome: " + alts[i].Note
	}
	return "none of the allowed outcomes"
}

// KEP §Design Details › Failure and Fallback Strategy, rows 1-4 (rows 5 and
// 6 are API rules: seccomp/api/runtime-profile-invalid and
// seccomp/api/localhost-path-invalid).
var _ = Describe("[seccomp] failure and fallback", Label("seccomp", "failure"), func() {
	setUp()
	kubeletRule("seccomp/failure/row-1", func(ctx context.Context, t *scenario) {
		obs := t.runOnNode(ctx, "no-seccomp-runtime", false,
			fx.RuntimeClass(clusters.NoSeccompHandler), fx.PodSeccomp(fx.Profile(runtimeDefault, "")))
		obs.Container.Behaviour = describeOutcome(t.Exp.Expected.AnyOf, obs.Container)
		t.judge(sub{Name: "RuntimeDefault under runtime handler " + clusters.NoSeccompHandler, Obs: obs})
	})

	kubeletRule("seccomp/failure/row-2", func(ctx context.Context, t *scenario) {
		execve := t.startOnNode(ctx, "deny-execve", fx.ContainerSeccomp(fx.Profile(localhost, profiles.DenyExecve)))
		mkdir := t.startOnNode(ctx, "deny-mkdir", fx.ContainerSeccomp(fx.Profile(localhost, profiles.DenyMkdir)))
		logged := t.startOnNode(ctx, "log-mkdir", fx.ContainerSeccomp(fx.Profile(localhost, profiles.LogMkdir)))

		mkdir.Container = t.observeContainer(ctx, "deny-mkdir", skew.ContainerName, false)
		var mkdirMust []string
		if mkdir.Container.State == skew.Running {
			ok, desc := t.try(ctx, "deny-mkdir", skew.ContainerName, "mkdir", "mkdir /tmp/denied")
			mkdir.Container.Behaviour = "misbehaves, " + desc
			if ok || !containsEPERM(desc) {
				mkdirMust = append(mkdirMust, "the workload must misbehave (mkdir EPERM): "+desc)
			}
		}

		logged.Container = t.observeContainer(ctx, "log-mkdir", skew.ContainerName, false)
		var logMust []string
		if logged.Container.State == skew.Running {
			// A copy of busybox under a unique name makes the kernel's log
			// line (comm="<name>") ours even when other nodes of the same
			// kernel run this spec at the same time; busybox runs argv[1]
			// as the applet when its name starts with "busybox" (15
			// characters: the whole name fits in comm).
			comm := "busybox" + rand.String(8)
			ok, desc := t.try(ctx, "log-mkdir", skew.ContainerName, "mkdir",
				fmt.Sprintf("cp /bin/busybox /tmp/%s && /tmp/%s mkdir /tmp/logged", comm, comm))
			logged.Container.Behaviour = desc + " (SCMP_ACT_LOG allows the call)"
			if !ok {
				logMust = append(logMust, "SCMP_ACT_LOG must let mkdir succeed: "+desc)
			}
			switch line, err := t.kernelLogLine(ctx, `comm="`+comm+`"`); {
			case err != nil:
				logged.Container.Behaviour += "; kernel log not read: " + err.Error()
			case line == "":
				logMust = append(logMust, "SCMP_ACT_LOG: no kernel log line for the logged mkdir (comm="+comm+")")
			default:
				logged.Container.Behaviour += "; logged by the kernel: " + line
			}
		}
		execve.Container = t.observeContainer(ctx, "deny-execve", skew.ContainerName, false)
		execve.Container.Behaviour = strings.TrimSuffix("execve denied, the process cannot start; "+execve.Container.Behaviour, "; ")
		t.judge(
			sub{Name: "profile denies execve", Obs: execve, Want: observe.ForCase(skew.CaseDenyExecve)},
			sub{Name: "profile denies mkdir", Obs: mkdir, Want: observe.ForCase(skew.CaseDenyMkdir), Must: mkdirMust},
			sub{Name: "profile logs mkdir", Obs: logged, Want: observe.ForCase(skew.CaseLogMkdir), Must: logMust},
		)
	})

	kubeletRule("seccomp/failure/row-3", func(ctx context.Context, t *scenario) {
		t.judge(sub{Name: "profile with an invalid action", Obs: t.runOnNode(ctx, "invalid-action", true,
			fx.ContainerSeccomp(fx.Profile(localhost, profiles.InvalidAction)))})
	})

	// Row 4: a profile no node has (one name per node), then the same pod
	// once the agent has installed that profile. Serial: it installs and
	// removes a profile on every node.
	kubeletRule("seccomp/failure/row-4", func(ctx context.Context, t *scenario) {
		fixtures, err := profiles.NewCluster(env.Config, profiles.FixturesNamespace)
		Expect(err).NotTo(HaveOccurred())
		content, ok := profiles.SeccompByName(skew.SeccompLocalhostProfile)
		Expect(ok).To(BeTrue(), "profile %s is not a fixture", skew.SeccompLocalhostProfile)
		m := profiles.Manifest{Kind: api.KindSeccompProfile, Name: path.Base(skew.SeccompMissingProfilePrefix) + t.nodeName(),
			Content: string(content.Content)}
		localhostProfile := api.SeccompLocalhostProfile(profiles.FixturesNamespace, m.Name)
		Expect(localhostProfile).To(HavePrefix(skew.SeccompMissingProfilePrefix))
		pod := func() []fx.PodOption {
			return []fx.PodOption{fx.ContainerSeccomp(fx.Profile(localhost, localhostProfile))}
		}
		missing := t.runOnNode(ctx, "missing-profile", true, pod()...)

		// The same pod on a node that has the file: installed through the
		// agent, removed again afterwards.
		DeferCleanup(func(ctx SpecContext) {
			Expect(profiles.Uninstall(ctx, fixtures, []profiles.Manifest{m}, time.Minute)).To(Succeed())
		})
		_, err = profiles.Install(ctx, fixtures, []profiles.Manifest{m}, nil, profiles.InstallOptions{Timeout: 2 * time.Minute})
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Client.CoreV1().Pods(t.NS).Delete(ctx, "missing-profile", metav1.DeleteOptions{})).To(Succeed())
		present := t.runOnNode(ctx, "profile-present", false, pod()...)
		var must []string
		if present.Container.State != skew.Running {
			must = append(must, "the same pod must run once the profile is on the node: "+present.Container.String())
		}
		t.judge(
			sub{Name: "profile missing on the node", Obs: missing},
			sub{Name: "profile present on the node", Obs: present, Want: func(skew.Observation) skew.Observation { return skew.Observation{} }, Must: must},
		)
	}, Serial)
})

// kernelLogLine waits up to 10 s for a seccomp log line (audit type 1326)
// containing match in the kernel log of the scenario's node; it needs node
// access (kind nodes share the host kernel and can read its log).
func (t *scenario) kernelLogLine(ctx context.Context, match string) (string, error) {
	if env.NodeAccess != "docker" {
		return "", fmt.Errorf("no node access (SKEWPROOF_NODE_ACCESS=%s)", env.NodeAccess)
	}
	for i := 0; i < 10; i++ {
		out, err := clusters.Docker(ctx, "exec", t.nodeName(), "dmesg")
		if err != nil {
			return "", err
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "type=1326") && strings.Contains(l, match) {
				if j := strings.Index(l, "audit:"); j >= 0 {
					l = l[j:]
				}
				return l, nil
			}
		}
		time.Sleep(time.Second)
	}
	return "", nil
}
