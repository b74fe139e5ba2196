package harness

import (
	"testing"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew"
)

// TestJudgedOn: with an AppArmor node beside the kind worker of the same
// kubelet and runtime, the AppArmor enforcement rows are judged on the
// AppArmor node only, the rows for hosts without AppArmor and the seccomp
// rules on the kind worker only; a worker without a twin judges
// everything, and a twin of another kubelet or runtime is no twin.
func TestJudgedOn(t *testing.T) {
	defer func(v *version.Version) { Env.APIServer = v }(Env.APIServer)
	Env.APIServer = version.Must(version.NewVersion("1.37.2"))
	v := func(s string) *version.Version { return version.Must(version.NewVersion(s)) }
	noAA := skew.HostFacts{Seccomp: true, Runtime: "containerd", OCIRuntime: "runc", CgroupVersion: 1}
	aa := noAA
	aa.AppArmor = true
	crio := noAA
	crio.Runtime, crio.OCIRuntime = "cri-o", "crun"
	kind37 := Node{Name: "c-worker2", Kubelet: v("1.37.2"), Host: noAA}
	uml37 := Node{Name: "c-uml-worker2", Kubelet: v("1.37.2"), Host: aa, slow: true}
	kind34 := Node{Name: "c-worker", Kubelet: v("1.34.4"), Host: noAA}
	uml34 := Node{Name: "c-uml-worker", Kubelet: v("1.34.4"), Host: aa, slow: true}
	crio34 := Node{Name: "c-worker3", Kubelet: v("1.34.4"), Host: crio}
	all := []Node{kind34, kind37, uml34, uml37, crio34}
	for _, c := range []struct {
		id   string
		nd   Node
		want bool
	}{
		{"apparmor/kubelet/enforce", uml37, true},
		{"apparmor/kubelet/enforce", uml34, true},
		{"apparmor/kubelet/enforce", kind37, false}, // would skip: host without AppArmor
		{"apparmor/kubelet/enforce", kind34, false},
		{"apparmor/kubelet/enforce", crio34, true}, // no twin (another runtime): its skip is honest
		{"apparmor/failure/row-6", kind37, true},
		{"apparmor/failure/row-6", uml37, false}, // would skip: needs a host without AppArmor
		{"seccomp/kubelet/enforce", kind37, true},
		{"seccomp/kubelet/enforce", uml37, false}, // the kind worker judges it
		{"seccomp/kubelet/enforce", crio34, true},
	} {
		if got := JudgedOn(c.id, c.nd, all); got != c.want {
			t.Errorf("JudgedOn(%s, %s) = %v, want %v", c.id, c.nd.Name, got, c.want)
		}
	}
	// Alone (--apparmor-node off, or an AppArmor node of a kubelet no kind
	// worker has), a node judges every rule.
	for _, id := range []string{"apparmor/kubelet/enforce", "seccomp/kubelet/enforce", "apparmor/failure/row-6"} {
		for _, nd := range []Node{kind37, uml37} {
			if !JudgedOn(id, nd, []Node{nd, kind34}) {
				t.Errorf("JudgedOn(%s, %s) without a twin = false, want true", id, nd.Name)
			}
		}
	}
}

// TestEveryNodeWait: waits on every node are four times longer on a
// cluster with an AppArmor node, unchanged without one.
func TestEveryNodeWait(t *testing.T) {
	defer func(n []Node) { Env.Nodes = n }(Env.Nodes)
	Env.Nodes = []Node{{Name: "w"}, {Name: "cp"}}
	if got := EveryNodeWait(time.Minute); got != time.Minute {
		t.Errorf("without an AppArmor node: %s, want 1m", got)
	}
	Env.Nodes = append(Env.Nodes, Node{Name: "u", slow: true})
	if got := EveryNodeWait(time.Minute); got != 4*time.Minute {
		t.Errorf("with an AppArmor node: %s, want 4m", got)
	}
}
