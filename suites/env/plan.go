package env

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// Plan is the run plan: what the runner found out once, before any suite
// process starts, and hands to every one of them as one file (PlanFile).
// A suite process reads it and asks the cluster nothing of it again.
type Plan struct {
	// Cluster is the name recorded in the reports.
	Cluster string `json:"cluster"`
	// Kubeconfig is the kubeconfig of the cluster under test.
	Kubeconfig string `json:"kubeconfig"`
	// RunID labels every namespace and object the run creates (RunLabel),
	// so that leftovers can be found and removed.
	RunID string `json:"runID"`
	// Own is true when the runner brought the cluster up itself (not
	// --kubeconfig): what skewproof set up there (RuntimeClasses, runtime
	// handlers, the node agent, readable metrics) is never a reason to skip
	// a spec; its absence fails the spec.
	Own bool `json:"own,omitempty"`
	// Keep keeps what the suites created (namespaces, the profiles suite's
	// agent).
	Keep bool `json:"keep,omitempty"`
	// APIServer is the API server's version (its gitVersion).
	APIServer string `json:"apiserver"`
	// AgentImage is the node agent image present on every node (the
	// profiles suite deploys it); AgentImageNote says why it has no
	// apparmor_parser (empty: it has one).
	AgentImage     string `json:"agentImage,omitempty"`
	AgentImageNote string `json:"agentImageNote,omitempty"`
	// Nodes are every node of the cluster, sorted by name.
	Nodes []PlanNode `json:"nodes"`
}

// PlanNode is one node of the plan.
type PlanNode struct {
	Name         string `json:"name"`
	ControlPlane bool   `json:"controlPlane,omitempty"`
	// OS is the node's operating system (its label kubernetes.io/os).
	OS string `json:"os,omitempty"`
	// Kubelet is the kubelet's version (node.status.nodeInfo, or the
	// label nodefacts.KubeletVersionLabel where that is empty).
	Kubelet string `json:"kubelet"`
	// Host are the facts of the node's host the oracle asks about: the CRI
	// runtime (node.status.nodeInfo.containerRuntimeVersion), the OCI
	// runtime (the node's labels nodefacts.OCIRuntimeLabel and
	// nodefacts.OCIRuntimeVersionLabel), and the kernel's seccomp, AppArmor and
	// cgroup version as read on the node (HostFrom says how).
	Host skew.HostFacts `json:"host"`
	// HostFrom says where the kernel facts of Host were read: "node-agent"
	// (the node agent's pod on that node), "local" (this host's kernel: a
	// node container shares it, and a suite process run by hand without a
	// plan assumes it).
	HostFrom string `json:"hostFrom"`
	// AppArmorKernel is true on the User-Mode Linux node skewproof made to
	// enforce AppArmor (nodefacts.AppArmorKernelLabel): one slow CPU.
	AppArmorKernel bool `json:"appArmorKernel,omitempty"`
	// Access is how the node's files are reached from the host
	// (nodeaccess.Access: "docker" or "none"), node by node: a node without
	// it (a User-Mode Linux node) takes nothing away from the others.
	Access string `json:"access"`
	// Untestable says why the node's kubelet rules cannot run (not Ready;
	// on an own cluster also cordoned); they are reported fail (Own) or
	// skip with the reason. Empty: testable.
	Untestable string `json:"untestable,omitempty"`
}

// Where the kernel facts of a PlanNode were read.
const (
	HostFromAgent = "node-agent"
	HostFromLocal = "local"
)

// Workers are the nodes the kubelet rules run on: every node that is not a
// control plane (every node when all are), Ready or not, so that a node
// that cannot be tested is in the report with why.
func (p Plan) Workers() []PlanNode {
	var out []PlanNode
	for _, n := range p.Nodes {
		if !n.ControlPlane {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return p.Nodes
	}
	return out
}

// NodeNames are the names of every node of the plan.
func (p Plan) NodeNames() []string {
	out := make([]string, len(p.Nodes))
	for i, n := range p.Nodes {
		out[i] = n.Name
	}
	return out
}

// SetAccess sets each node's Access from access (a node it does not name
// has none).
func (p *Plan) SetAccess(access map[string]nodeaccess.Access) {
	for i := range p.Nodes {
		p.Nodes[i].Access = string(nodeaccess.None)
		if a, ok := access[p.Nodes[i].Name]; ok {
			p.Nodes[i].Access = string(a)
		}
	}
}

// Untestable are the nodes that cannot be tested, with why.
func (p Plan) Untestable() map[string]string {
	out := map[string]string{}
	for _, n := range p.Nodes {
		if n.Untestable != "" {
			out[n.Name] = n.Untestable
		}
	}
	return out
}

// NodesOf describes the API server's nodes for a plan, sorted by name:
// their role, kubelet and runtimes as the API server has them, host facts
// (kernel facts from host, recorded as read from), and, as untestable, the
// nodes that are not Ready (the runner has its own rule for its own
// clusters, and sets Untestable itself).
func NodesOf(nodes []corev1.Node, host skew.HostFacts, from string) ([]PlanNode, error) {
	var out []PlanNode
	for i := range nodes {
		n := &nodes[i]
		kv := n.Status.NodeInfo.KubeletVersion
		if l := n.Labels[nodefacts.KubeletVersionLabel]; l != "" && kv == "" {
			kv = l
		}
		if _, err := release.ParseReleaseVersion(kv); err != nil {
			return nil, fmt.Errorf("node %s: kubelet version: %w", n.Name, err)
		}
		f := host
		f.Runtime, f.RuntimeVersion = skew.ParseContainerRuntimeVersion(n.Status.NodeInfo.ContainerRuntimeVersion)
		f.OCIRuntime = strings.TrimSpace(n.Labels[nodefacts.OCIRuntimeLabel])
		f.OCIRuntimeVersion = strings.TrimSpace(n.Labels[nodefacts.OCIRuntimeVersionLabel])
		pn := PlanNode{Name: n.Name, ControlPlane: nodefacts.IsControlPlane(n), OS: n.Labels[corev1.LabelOSStable], Kubelet: kv, Host: f, HostFrom: from,
			AppArmorKernel: n.Labels[nodefacts.AppArmorKernelLabel] == "true", Untestable: nodefacts.NotReady(n)}
		out = append(out, pn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// WritePlan writes p to path (PlanFile).
func WritePlan(path string, p Plan) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// ReadPlan reads the plan at path.
func ReadPlan(path string) (Plan, error) {
	var p Plan
	b, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("%s: %w", PlanFile, err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s=%s: %w", PlanFile, path, err)
	}
	if p.Kubeconfig == "" || len(p.Nodes) == 0 {
		return p, fmt.Errorf("%s=%s: a plan names a kubeconfig and the nodes", PlanFile, path)
	}
	for _, n := range p.Nodes {
		if a := nodeaccess.Access(n.Access); a != nodeaccess.Docker && a != nodeaccess.None {
			return p, fmt.Errorf("%s=%s: node %s: access %q: want %q or %q", PlanFile, path, n.Name, n.Access, nodeaccess.Docker, nodeaccess.None)
		}
	}
	return p, nil
}
