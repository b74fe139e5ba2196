package env

import (
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/skew"
)

func node(name, kubelet, crv string, labels map[string]string, ready corev1.ConditionStatus) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet, ContainerRuntimeVersion: crv},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
}

// TestNodesOf: a node's runtime comes from containerRuntimeVersion (name
// and version), the OCI runtime from its labels where set, the kernel
// facts from what was read, the role and the User-Mode Linux kernel from
// its labels; a node that is not Ready is untestable unless the runner
// said otherwise; the nodes come sorted.
func TestNodesOf(t *testing.T) {
	kernel := skew.HostFacts{CgroupVersion: 2, Seccomp: true}
	nodes := []corev1.Node{
		node("w3", "v1.37.2", "cri-o://1.34.0", map[string]string{nodefacts.OCIRuntimeLabel: "runc"}, corev1.ConditionFalse),
		node("cp", "v1.37.2", "containerd://1.7.24", map[string]string{"node-role.kubernetes.io/control-plane": ""}, corev1.ConditionTrue),
		node("w2", "v1.34.4", "containerd://2.4.2", map[string]string{nodefacts.OCIRuntimeLabel: "crun", nodefacts.OCIRuntimeVersionLabel: "1.21",
			nodefacts.AppArmorKernelLabel: "true"}, corev1.ConditionTrue),
		node("w1", "", "containerd://Unknown", map[string]string{nodefacts.KubeletVersionLabel: "v1.36.1"}, corev1.ConditionTrue),
	}
	got, err := NodesOf(nodes, kernel, HostFromAgent)
	if err != nil {
		t.Fatal(err)
	}
	host := func(rt, rtv, oci, ociv string) skew.HostFacts {
		h := kernel
		h.Runtime, h.RuntimeVersion, h.OCIRuntime, h.OCIRuntimeVersion = rt, rtv, oci, ociv
		return h
	}
	want := []PlanNode{
		{Name: "cp", ControlPlane: true, Kubelet: "v1.37.2", Host: host("containerd", "1.7.24", "", ""), HostFrom: HostFromAgent},
		{Name: "w1", Kubelet: "v1.36.1", Host: host("containerd", "", "", ""), HostFrom: HostFromAgent},
		{Name: "w2", Kubelet: "v1.34.4", Host: host("containerd", "2.4.2", "crun", "1.21"), HostFrom: HostFromAgent, AppArmorKernel: true},
		{Name: "w3", Kubelet: "v1.37.2", Host: host("cri-o", "1.34.0", "runc", ""), HostFrom: HostFromAgent,
			Untestable: "node w3 is not Ready (Ready=False)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NodesOf:\n got %+v\nwant %+v", got, want)
	}
	p := Plan{Kubeconfig: "kc", Nodes: got}
	if w := p.Workers(); len(w) != 3 || w[0].Name != "w1" {
		t.Errorf("Workers() = %+v, want w1, w2, w3", w)
	}
	if u := p.Untestable(); len(u) != 1 || u["w3"] == "" {
		t.Errorf("Untestable() = %v, want w3", u)
	}
	if _, err := NodesOf([]corev1.Node{node("x", "garbage", "", nil, corev1.ConditionTrue)}, kernel, HostFromAgent); err == nil {
		t.Error("a kubelet version that does not parse: no error")
	}
	// Only control planes: they are the workers.
	if w := (Plan{Nodes: got[:1]}).Workers(); len(w) != 1 || w[0].Name != "cp" {
		t.Errorf("Workers() of a control plane alone = %+v", w)
	}
}

// Node access is per node: the plan records each, and one node without it
// leaves the others theirs.
func TestPlanSetAccess(t *testing.T) {
	p := Plan{Nodes: []PlanNode{{Name: "cp"}, {Name: "uml"}, {Name: "w1"}}}
	p.SetAccess(map[string]nodeaccess.Access{"cp": nodeaccess.Docker, "uml": nodeaccess.None, "w1": nodeaccess.Docker})
	want := map[string]string{"cp": "docker", "uml": "none", "w1": "docker"}
	for _, n := range p.Nodes {
		if n.Access != want[n.Name] {
			t.Errorf("node %s: access %q, want %q", n.Name, n.Access, want[n.Name])
		}
	}
	p.SetAccess(nil)
	if p.Nodes[0].Access != "none" {
		t.Errorf("a node the probe does not name: access %q, want none", p.Nodes[0].Access)
	}
}

func TestPlanRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	p := Plan{Cluster: "c", Kubeconfig: "/kc", RunID: "abc123", Own: true, APIServer: "v1.37.2",
		AgentImage: "skewproof.local/agent:x", Nodes: []PlanNode{{Name: "w1", Kubelet: "v1.37.2", Host: skew.HostFacts{Seccomp: true}, Access: "docker"},
			{Name: "uml", Kubelet: "v1.37.2", Access: "none", AppArmorKernel: true}}}
	if err := WritePlan(path, p); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPlan(path)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("ReadPlan = %+v, %v; want %+v", got, err, p)
	}
	for _, bad := range []Plan{{Cluster: "c"}, {Kubeconfig: "/kc", Nodes: []PlanNode{{Name: "w1", Access: "ssh"}}}, {Kubeconfig: "/kc", Nodes: []PlanNode{{Name: "w1"}}}} {
		if err := WritePlan(path, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadPlan(path); err == nil {
			t.Errorf("a plan without kubeconfig or nodes, or with an unknown node access: no error for %+v", bad)
		}
	}
	if _, err := ReadPlan(filepath.Join(t.TempDir(), "absent.json")); err == nil {
		t.Error("no plan file: no error")
	}
}
