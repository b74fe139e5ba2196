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

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

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
		reader := t.StartKernelLogReader(ctx)

		// The workload misbehaves: mkdir fails with EPERM (the harness
		// probes it, skew.EffectSeccompDenyMkdir).
		mkdir.Container = t.ObserveContainer(ctx, "deny-mkdir", names.ContainerName, false)

		logged.Container = t.ObserveContainer(ctx, "log-mkdir", names.ContainerName, false)
		var logMust []string
		var logUnmade *h.Unmade
		if logged.Container.State == skew.Running {
			// A copy of busybox under a unique name makes the kernel's log
			// line (comm="<name>") ours even when other nodes of the same
			// kernel run this spec at the same time; busybox runs argv[1]
			// as the applet when its name starts with "busybox" (15
			// characters: the whole name fits in comm).
			comm := "busybox" + rand.String(8)
			ok, desc := t.Try(ctx, "log-mkdir", names.ContainerName, "mkdir",
				fmt.Sprintf("cp /bin/busybox /tmp/%s && /tmp/%s mkdir /tmp/logged", comm, comm))
			logged.Container.Behaviour = desc + " (SCMP_ACT_LOG allows the call)"
			if !ok {
				logMust = append(logMust, "SCMP_ACT_LOG must let mkdir succeed: "+desc)
			}
			line, unmade := reader.SeccompLogLine(ctx, t, `comm="`+comm+`"`)
			switch {
			case unmade != nil:
				logUnmade = unmade
				logged.Container.Behaviour += "; kernel log not read: " + unmade.Reason
			case line == "":
				logMust = append(logMust, "SCMP_ACT_LOG: no kernel log line for the logged mkdir (comm="+comm+") within "+h.KernelLogWait.String())
			default:
				logged.Container.Behaviour += "; logged by the kernel: " + line
			}
		}
		execve.Container = t.ObserveContainer(ctx, "deny-execve", names.ContainerName, false)
		execve.Container.Behaviour = strings.TrimSuffix("execve denied, the process cannot start; "+execve.Container.Behaviour, "; ")
		t.Judge(
			h.Sub{Name: "profile denies execve", Obs: execve, Want: observe.ForCase(skew.CaseDenyExecve)},
			h.Sub{Name: "profile denies mkdir", Obs: mkdir, Want: observe.ForCase(skew.CaseDenyMkdir)},
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
		content, ok := profiles.SeccompByName(names.SeccompLocalhostProfile)
		Expect(ok).To(BeTrue(), "profile %s is not a fixture", names.SeccompLocalhostProfile)
		m := profiles.Manifest{Kind: api.KindSeccompProfile, Name: path.Base(names.SeccompMissingProfilePrefix) + t.NodeName(),
			Content: string(content.Content)}
		localhostProfile := api.SeccompLocalhostProfile(profiles.FixturesNamespace, m.Name)
		Expect(localhostProfile).To(HavePrefix(names.SeccompMissingProfilePrefix))
		pod := func() []fx.PodOption {
			return []fx.PodOption{fx.ContainerSeccomp(fx.Profile(localhost, localhostProfile))}
		}
		missing := t.RunOnNode(ctx, "missing-profile", true, pod()...)

		// The same pod on a node that has the file: installed through the
		// agent, removed again afterwards.
		DeferCleanup(func(ctx SpecContext) {
			Expect(profiles.Uninstall(ctx, fixtures, []profiles.Manifest{m}, time.Minute)).To(Succeed())
		})
		_, err = profiles.Install(ctx, fixtures, []profiles.Manifest{m}, nil, profiles.InstallOptions{Timeout: h.EveryNodeWait(2 * time.Minute)})
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
