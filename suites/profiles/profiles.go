package profiles

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"path"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

const denyMkdir = `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}]}`

func seccompManifest(prefix string) profiles.Manifest {
	return profiles.Manifest{Kind: api.KindSeccompProfile, Name: fmt.Sprintf("%s-%04d", prefix, rand.Intn(10000)), Content: denyMkdir}
}

// nodeFile is where the agent puts a SeccompProfile on a kind node.
func nodeFile(m profiles.Manifest) string {
	return path.Join("/var/lib/kubelet/seccomp", api.SeccompLocalhostProfile(Namespace, m.Name))
}

func nodeStatuses(ctx context.Context, m profiles.Manifest) []api.ProfileNodeStatus {
	l, err := env.Cluster.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: api.ProfileSelector(m.Kind, m.Name)})
	Expect(err).NotTo(HaveOccurred())
	out := make([]api.ProfileNodeStatus, len(l.Items))
	for i := range l.Items {
		Expect(api.FromUnstructured(&l.Items[i], &out[i])).To(Succeed())
	}
	return out
}

func profileEvents(ctx context.Context, m profiles.Manifest) []corev1.Event {
	l, err := env.Cluster.Core.CoreV1().Events(Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.SelectorFromSet(fields.Set{"involvedObject.name": m.Name, "involvedObject.kind": m.Kind}).String()})
	Expect(err).NotTo(HaveOccurred())
	return l.Items
}

// uninstallLater deletes the profiles at the end of the spec.
func uninstallLater(ms ...profiles.Manifest) {
	DeferCleanup(func(ctx SpecContext) {
		Expect(profiles.Uninstall(ctx, env.Cluster, ms, 2*time.Minute)).To(Succeed())
	}, NodeTimeout(3*time.Minute))
}

// breakSeccompDir makes this namespace's directory under a node's seccomp
// root read-only; the agent runs as root without CAP_DAC_OVERRIDE, so it can
// no longer create files there. Undone at the end of the spec.
func breakSeccompDir(ctx context.Context, nd h.Node) {
	dir := path.Join("/var/lib/kubelet/seccomp", api.SeccompDir, Namespace)
	// The directory holds a file of its own: the agent removes its
	// directory once empty (after any profile's removal), and recreates it
	// writable on the next install, so an empty read-only one could be
	// gone before the spec's profile arrives (seen once: the node became
	// Installed, not Failed). The agent leaves names that are neither
	// profiles nor its temporary files alone.
	_, err := h.NodeShell(ctx, nd.Name, `mkdir -p "$1" && touch "$1/.skewproof-fault" && chmod 0555 "$1"`, dir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		_, err := h.NodeShell(ctx, nd.Name, `chmod 0755 "$1" && rm -f "$1/.skewproof-fault"`, dir)
		Expect(err).NotTo(HaveOccurred())
	})
}

var _ = Describe("[profiles] node agent", Label("profiles", "LinuxOnly"), func() {
	h.Specs(family)
	withAgent()
	It("[profiles/agent/ready] the agent DaemonSet is Ready on every node, whatever its kubelet version [LinuxOnly]", Label("profiles-agent-ready"), func(ctx SpecContext) {
		pods, err := env.Cluster.AgentPods(ctx)
		Expect(err).NotTo(HaveOccurred())
		var seen []string
		for _, n := range env.Nodes {
			Expect(pods).To(HaveKeyWithValue(n.Name, true), "agent pod on node %s (kubelet v%s) not ready", n.Name, n.Kubelet)
			seen = append(seen, n.Name+"=v"+n.Kubelet.String())
		}
		h.RecordPass("profiles/agent/ready", nil, "agent Ready on "+strings.Join(seen, ", "))
	})

	It("[profiles/agent/apparmor-parser] the agent image holds an apparmor_parser that runs in the agent pod on every node [LinuxOnly]", Label("profiles-agent-apparmor-parser"), func(ctx SpecContext) {
		if h.Env.AgentImageNote != "" {
			// skewproof built that image: on its own cluster, a failure.
			h.MissingSetUp("profiles/agent/apparmor-parser", nil, h.Env.AgentImageNote)
		}
		pods, err := env.Cluster.Core.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + agent.AgentName})
		Expect(err).NotTo(HaveOccurred())
		onNode := map[string]string{}
		for _, p := range pods.Items {
			onNode[p.Spec.NodeName] = p.Name
		}
		var seen []string
		for _, n := range env.Nodes {
			pod, ok := onNode[n.Name]
			Expect(ok).To(BeTrue(), "no agent pod on node %s", n.Name)
			// An exec whose streams came back empty without an error (seen
			// on a loaded AppArmor node) is asked again, for a minute at most:
			// the answer judged is the parser's own.
			var stdout, stderr string
			Eventually(func(g Gomega) {
				var err error
				stdout, stderr, err = h.PodExec(ctx, Namespace, pod, "agent", "apparmor_parser", "--version")
				g.Expect(err).NotTo(HaveOccurred(), "apparmor_parser --version in agent pod %s on node %s (kubelet v%s): %s", pod, n.Name, n.Kubelet, stderr)
				g.Expect(stdout+stderr).NotTo(BeEmpty(), "apparmor_parser --version in agent pod %s on node %s: no output", pod, n.Name)
			}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(5 * time.Second).Should(Succeed())
			Expect(stdout).To(ContainSubstring("AppArmor parser version"), "apparmor_parser --version in agent pod %s on node %s", pod, n.Name)
			Expect(stderr).To(BeEmpty(), "apparmor_parser warned in agent pod %s on node %s", pod, n.Name)
			seen = append(seen, n.Name+": "+strings.TrimSpace(strings.SplitN(stdout, "\n", 2)[0]))
		}
		h.RecordPass("profiles/agent/apparmor-parser", nil, "apparmor_parser --version exits 0 in the agent pod on "+strings.Join(seen, "; "))
	})
})

var _ = Describe("[profiles] per-node status", Label("profiles", "LinuxOnly"), func() {
	h.Specs(family)
	withAgent()
	It("[profiles/node-status/per-node] one status object per profile and node, named profile+node, labelled with the profile, owned by it and garbage-collected with it [LinuxOnly]",
		Label("profiles-node-status-per-node", senv.LabelWaitsForGC), func(ctx SpecContext) {
			m := seccompManifest("per-node")
			rep, err := profiles.Install(ctx, env.Cluster, []profiles.Manifest{m}, nodeNames(), profiles.InstallOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(rep[0].Aggregate).To(Equal(api.Installed))
			Expect(rep[0].LocalhostProfile).To(Equal(api.SeccompLocalhostProfile(Namespace, m.Name)))
			p, _, err := status.GetProfile(ctx, env.Cluster.Dynamic, m.Kind, Namespace, m.Name)
			Expect(err).NotTo(HaveOccurred())

			sts := nodeStatuses(ctx, m)
			Expect(sts).To(HaveLen(len(env.Nodes)), "one node status per node")
			perNode := map[string]int{}
			for _, s := range sts {
				perNode[s.NodeName]++
				Expect(s.Name).To(Equal(m.Name + "-" + s.NodeName))
				Expect(s.Labels).To(HaveKeyWithValue(api.LabelProfile, m.Name))
				Expect(s.Labels).To(HaveKeyWithValue(api.LabelNode, s.NodeName))
				Expect(s.ProfileName).To(Equal(m.Name))
				Expect(s.Status).To(Equal(api.Installed))
				Expect(s.OwnerReferences).To(ConsistOf(HaveField("UID", BeEquivalentTo(p.UID))))
				Expect(s.OwnerReferences[0].Kind).To(Equal(api.KindSeccompProfile))
			}
			for _, n := range env.Nodes {
				Expect(perNode).To(HaveKeyWithValue(n.Name, 1))
			}
			// The files are looked at on every node this host reaches (a
			// User-Mode Linux node is not one); the statuses above hold
			// for every node.
			reached := h.WithAccess(env.Nodes)
			files := len(reached) > 0
			if files {
				for _, n := range reached {
					out, err := h.NodeShell(ctx, n.Name, `cat "$1"`, nodeFile(m))
					Expect(err).NotTo(HaveOccurred())
					Expect(strings.TrimSpace(out)).To(Equal(denyMkdir), "profile file on node %s", n.Name)
				}
			}

			By("deleting the profile: the garbage collector removes the node statuses, the agents the files")
			res, _ := api.Resource(m.Kind)
			Expect(env.Cluster.Dynamic.Resource(res).Namespace(Namespace).Delete(ctx, m.Name, metav1.DeleteOptions{})).To(Succeed())
			Eventually(func(ctx context.Context) []api.ProfileNodeStatus { return nodeStatuses(ctx, m) }).
				WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(BeEmpty())
			if files {
				for _, n := range reached {
					Eventually(func(ctx context.Context) string {
						out, _ := h.NodeShell(ctx, n.Name, `test -e "$1" && echo present || echo absent`, nodeFile(m))
						return strings.TrimSpace(out)
					}).WithContext(ctx).WithTimeout(60*time.Second).WithPolling(time.Second).Should(Equal("absent"), "file on node %s", n.Name)
				}
			}
			outcome := fmt.Sprintf("%d node statuses named profile-node, owned by the profile, removed by the garbage collector", len(sts))
			if files {
				outcome += fmt.Sprintf("; files written and removed on %s", nodeList(reached, len(env.Nodes)))
			}
			h.RecordPass("profiles/node-status/per-node", nil, outcome)
		})

	It("[profiles/node-status/aggregate] the profile's status is the lowest common status of its nodes, without flapping while nodes progress [LinuxOnly]",
		Label("profiles-node-status-aggregate"), func(ctx SpecContext) {
			m := seccompManifest("aggregate")
			res, _ := api.Resource(m.Kind)
			// Record every aggregated status the profile shows, from creation on.
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			w, err := env.Cluster.Dynamic.Resource(res).Namespace(Namespace).Watch(wctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("metadata.name", m.Name).String()})
			Expect(err).NotTo(HaveOccurred())
			seen := make(chan []api.Status, 1)
			go func() {
				var seq []api.Status
				for ev := range w.ResultChan() {
					if u, ok := ev.Object.(interface{ UnstructuredContent() map[string]any }); ok {
						st, _ := u.UnstructuredContent()["status"].(map[string]any)
						if s, _ := st["status"].(string); s != "" && (len(seq) == 0 || seq[len(seq)-1] != api.Status(s)) {
							seq = append(seq, api.Status(s))
						}
					}
				}
				seen <- seq
			}()
			uninstallLater(m)
			rep, err := profiles.Install(ctx, env.Cluster, []profiles.Manifest{m}, nodeNames(), profiles.InstallOptions{})
			Expect(err).NotTo(HaveOccurred())
			// Let the watch deliver the last update, then stop it.
			time.Sleep(time.Second)
			w.Stop()
			cancel()
			seq := <-seen
			Expect(seq).NotTo(BeEmpty())
			for i := 1; i < len(seq); i++ {
				Expect(seq[i].Rank()).To(BeNumerically(">=", seq[i-1].Rank()), "aggregate went back: %v", seq)
			}
			Expect(seq[len(seq)-1]).To(Equal(api.Installed))
			p, _, err := status.GetProfile(ctx, env.Cluster.Dynamic, m.Kind, Namespace, m.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Status.Nodes).To(Equal(map[api.Status]int32{api.Installed: int32(len(env.Nodes))}))
			Expect(p.Status.NotReady).To(BeEmpty())
			Expect(rep[0].Nodes).To(HaveLen(len(env.Nodes)))
			h.RecordPass("profiles/node-status/aggregate", nil, fmt.Sprintf("aggregate sequence %v over %d nodes", seq, len(env.Nodes)))
		})

	It("[profiles/node-status/partial] a failure or an unsupported profile type on one node shows on that node only [LinuxOnly]",
		Label("profiles-node-status-partial"), func(ctx SpecContext) {
			const id = "profiles/node-status/partial"
			if len(env.Nodes) < 2 {
				// The others are not Ready (the run reports them itself); on
				// skewproof's own cluster, which has two nodes at least, a
				// failure of its set-up all the same.
				h.MissingSetUp(id, nil, fmt.Sprintf("needs two nodes to show a failure on one only; the run can test %d (left out: %v)", len(env.Nodes), env.Excluded))
			}
			// The fault needs docker access to the node it breaks: any node
			// that has it will do, whatever the others (a User-Mode Linux
			// node has none).
			bad := h.NodeWithAccess(id, env.Nodes)
			m := seccompManifest("partial")
			uninstallLater(m)
			breakSeccompDir(ctx, bad)
			_, err := profiles.Install(ctx, env.Cluster, []profiles.Manifest{m}, nodeNames(), profiles.InstallOptions{
				Want: map[string]api.Status{bad.Name: api.Failed}, Timeout: h.EveryNodeWait(90 * time.Second)})
			Expect(err).NotTo(HaveOccurred())
			for _, s := range nodeStatuses(ctx, m) {
				if s.NodeName == bad.Name {
					Expect(s.Status).To(Equal(api.Failed))
					Expect(s.Message).To(ContainSubstring("permission denied"))
				} else {
					Expect(s.Status).To(Equal(api.Installed), "node %s", s.NodeName)
				}
			}
			p, _, err := status.GetProfile(ctx, env.Cluster.Dynamic, m.Kind, Namespace, m.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Status.Status).To(Equal(api.Failed))
			Expect(p.Status.NotReady).To(Equal([]string{bad.Name}))
			Expect(p.Status.Nodes).To(Equal(map[api.Status]int32{api.Failed: 1, api.Installed: int32(len(env.Nodes) - 1)}))

			By("repairing the node: the agent's retry installs the profile")
			_, err = h.NodeShell(ctx, bad.Name, `chmod 0755 "$1"`, path.Dir(nodeFile(m)))
			Expect(err).NotTo(HaveOccurred())
			_, err = profiles.Install(ctx, env.Cluster, []profiles.Manifest{m}, nodeNames(), profiles.InstallOptions{Timeout: h.EveryNodeWait(60 * time.Second)})
			Expect(err).NotTo(HaveOccurred())

			outcome := fmt.Sprintf("fault on %s: Failed there only, aggregate Failed, Installed after repair", bad.Name)
			name := fmt.Sprintf("k8s-partial-%04d", rand.Intn(10000))
			aa := profiles.Manifest{Kind: api.KindAppArmorProfile, Name: name,
				Content: "#include <tunables/global>\nprofile " + name + " flags=(attach_disconnected) {\n  file,\n  deny /tmp/** w,\n}\n"}
			uninstallLater(aa)
			outcome += "; AppArmor profile " + appArmorPerNode(ctx, id, aa)
			h.RecordPass(id, &bad, outcome)
		})

	It("[profiles/node-status/events] node-specific events carry the node name [LinuxOnly]",
		Label("profiles-node-status-events"), func(ctx SpecContext) {
			m := seccompManifest("events")
			uninstallLater(m)
			want := map[string]api.Status{}
			// A failure event too where a node can be broken (docker
			// access); the Installed events are checked on every node.
			bad, reachable := h.FirstWithAccess(env.Nodes)
			if reachable {
				breakSeccompDir(ctx, bad)
				want[bad.Name] = api.Failed
			}
			_, err := profiles.Install(ctx, env.Cluster, []profiles.Manifest{m}, nodeNames(), profiles.InstallOptions{Want: want, Timeout: h.EveryNodeWait(90 * time.Second)})
			Expect(err).NotTo(HaveOccurred())
			for _, n := range env.Nodes {
				reason := agent.ReasonInstalled
				if n.Name == bad.Name {
					reason = agent.ReasonFailed
				}
				Eventually(func(ctx context.Context) []corev1.Event { return profileEvents(ctx, m) }).
					WithContext(ctx).WithTimeout(30*time.Second).WithPolling(time.Second).Should(ContainElement(And(
					HaveField("Reason", reason),
					HaveField("Message", HavePrefix("node "+n.Name+": ")),
					HaveField("Source.Host", n.Name),
				)), "event %s for node %s", reason, n.Name)
			}
			for _, e := range profileEvents(ctx, m) {
				if e.Reason == agent.ReasonFailed {
					Expect(e.Message).To(HavePrefix("node "+bad.Name+": "), "a failure event names another node")
				}
			}
			outcome := "ProfileInstalled events name each node"
			if bad.Name != "" {
				outcome += "; the ProfileInstallFailed event names " + bad.Name + " only"
			}
			h.RecordPass("profiles/node-status/events", nil, outcome)
		})
})

// The scale bench needs no agent (it writes the node statuses of simulated
// nodes itself): a Describe of the same text without withAgent, so that the
// runner's process of this spec alone deploys none (senv.LabelFloodsGC puts it in a process apart).
var _ = Describe("[profiles] per-node status", Label("profiles", "LinuxOnly"), func() {
	h.Specs(family)
	It("[profiles/node-status/scale] thousands of simulated nodes: every object far below 1 MiB, listing by label works, the aggregate is right [LinuxOnly]",
		Label("profiles-node-status-scale", senv.LabelFloodsGC), func(ctx SpecContext) {
			n := h.Env.ScaleNodes
			r, err := status.Bench(ctx, env.Cluster.Dynamic, status.BenchOptions{
				Namespace: fmt.Sprintf("skewproof-scale-%04d", rand.Intn(10000)), Nodes: n, Profiles: 3, Workers: 8,
				FailedNode: n / 2, Log: slog.New(slog.NewTextHandler(GinkgoWriter, nil))})
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Written).To(Equal(3 * n))
			Expect(r.LargestNodeStatusBytes).To(BeNumerically("<", 4096), "a node status must stay tiny")
			for i, p := range r.PerProfile {
				Expect(p.Listed).To(Equal(n))
				Expect(p.StatusBytes).To(BeNumerically("<", 8192), "a profile must not grow with the node count")
				if i == 0 {
					Expect(p.Status).To(Equal(api.Failed))
					Expect(p.Nodes).To(Equal(map[api.Status]int32{api.Failed: 1, api.Installed: int32(n - 1)}))
				} else {
					Expect(p.Status).To(Equal(api.Installed))
				}
			}
			AddReportEntry("scale figures", r.Markdown())
			h.RecordPass("profiles/node-status/scale", nil, fmt.Sprintf("%d simulated nodes × 3 profiles: largest node status %d B, list+aggregate %s, single object would pass 1 MiB at %d nodes",
				n, r.LargestNodeStatusBytes, r.PerProfile[0].List.Round(time.Millisecond), r.SingleObjectMaxNodes))
		})
})

// nodeList names nodes, a part of total nodes: "every node" when they are
// all of them.
func nodeList(nodes []h.Node, total int) string {
	if len(nodes) == total {
		return "every node"
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return fmt.Sprintf("%d of %d nodes (%s; the others are not reached from this host)", len(nodes), total, strings.Join(names, ", "))
}

// appArmorPerNode installs the AppArmor profile aa and checks each node's
// status: Installed where the node enforces AppArmor (its kernel has it, as
// the plan says, or it is skewproof's AppArmor node), Unsupported with the
// kernel's reason elsewhere; with both kinds in the cluster, an unsupported
// profile type shows on those nodes only. It returns the outcome. Nodes
// with AppArmor and an agent image without apparmor_parser stop the spec
// under the own-cluster rule (skewproof built the image).
func appArmorPerNode(ctx context.Context, id string, aa profiles.Manifest) string {
	want := map[string]api.Status{}
	var on, off []string
	for _, n := range env.Nodes {
		if n.Host.AppArmor || n.AppArmorKernel() {
			want[n.Name] = api.Installed
			on = append(on, n.Name)
			continue
		}
		want[n.Name] = api.Unsupported
		off = append(off, n.Name)
	}
	if len(on) > 0 && h.Env.AgentImageNote != "" {
		h.MissingSetUp(id, nil, fmt.Sprintf("nodes %v have AppArmor but %s", on, h.Env.AgentImageNote))
	}
	By(fmt.Sprintf("an AppArmor profile: loaded and Installed on the nodes with AppArmor %v, Unsupported on the others %v", on, off))
	// apparmor_parser on a User-Mode Linux node is slow.
	timeout := h.EveryNodeWait(2 * time.Minute)
	_, err := profiles.Install(ctx, env.Cluster, []profiles.Manifest{aa}, nodeNames(), profiles.InstallOptions{Want: want, Timeout: timeout})
	Expect(err).NotTo(HaveOccurred())
	sts := nodeStatuses(ctx, aa)
	Expect(sts).To(HaveLen(len(env.Nodes)), "one node status per node")
	for _, s := range sts {
		Expect(s.Status).To(Equal(want[s.NodeName]), "node %s", s.NodeName)
		if s.Status == api.Unsupported {
			Expect(s.Message).To(ContainSubstring("no AppArmor"), "node %s", s.NodeName)
		}
	}
	switch {
	case len(on) == 0:
		return fmt.Sprintf("Unsupported on every node (%d, no AppArmor)", len(off))
	case len(off) == 0:
		return fmt.Sprintf("loaded and Installed on every node (%d)", len(on))
	}
	return fmt.Sprintf("Installed on %v only, Unsupported on %v only", on, off)
}
