package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// TestUsePlan: the workers of the kubelet rules are the plan's non-control
// plane nodes with their facts (SKEWPROOF_WORKERS narrows them), a User-Mode
// Linux node lengthens the pod time-out, and Own comes from the plan.
func TestUsePlan(t *testing.T) {
	defer func(d time.Duration) { PodTimeout = d }(PodTimeout)
	p := senv.Plan{Cluster: "c", APIServer: "v1.37.2", Own: true, RunID: "r1", Nodes: []senv.PlanNode{
		{Name: "cp", ControlPlane: true, Kubelet: "v1.37.2"},
		{Name: "w2", Kubelet: "v1.34.4", Host: skew.HostFacts{Runtime: "cri-o"}, Untestable: "not Ready"},
		{Name: "w1", Kubelet: "v1.36.1", AppArmorKernel: true},
	}}
	if err := usePlan(p, ""); err != nil {
		t.Fatal(err)
	}
	if len(Env.Workers) != 2 || Env.Workers[0].Name != "w1" || !Env.Workers[0].slow || Env.Workers[1].Host.Runtime != "cri-o" ||
		Env.Workers[1].Untestable != "not Ready" || Env.Workers[1].Kubelet.String() != "1.34.4" {
		t.Errorf("workers = %+v", Env.Workers)
	}
	if !Env.Own || Env.Cluster != "c" || RunID() != "r1" || Env.APIServer.String() != "1.37.2" || PodTimeout != slowPodTimeout {
		t.Errorf("Env = %+v, run id %q, pod time-out %v", Env, RunID(), PodTimeout)
	}
	t.Setenv(senv.Workers, "w2")
	if err := usePlan(p, ""); err != nil || len(Env.Workers) != 1 || Env.Workers[0].Name != "w2" {
		t.Errorf("%s=w2: %+v, %v", senv.Workers, Env.Workers, err)
	}
	t.Setenv(senv.Workers, "nope")
	if err := usePlan(p, ""); err == nil {
		t.Errorf("%s names no node: no error", senv.Workers)
	}
}

// TestLinuxNodes: Env.Nodes are the plan's Linux nodes, control plane
// included, in the plan's order (by name).
func TestLinuxNodes(t *testing.T) {
	p := senv.Plan{APIServer: "v1.37.2", Nodes: []senv.PlanNode{{Name: "cp", OS: "linux", ControlPlane: true, Kubelet: "v1.37.2"},
		{Name: "unlabelled", Kubelet: "v1.37.2"}, {Name: "w1", OS: "linux", Kubelet: "v1.37.2"},
		{Name: "w2", OS: "linux", Kubelet: "v1.37.2"}, {Name: "win", OS: "windows", Kubelet: "v1.37.2"}}}
	if err := usePlan(p, ""); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range Env.Nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"cp", "w1", "w2"}) {
		t.Errorf("linux nodes %q, want cp, w1, w2", names)
	}
	if len(Env.Nodes) > 0 && !Env.Nodes[0].ControlPlane {
		t.Errorf("the control plane lost its role: %+v", Env.Nodes[0])
	}
}

// TestPositive: a number setting is its default when unset, a positive
// number when set, and an error naming the variable otherwise.
func TestPositive(t *testing.T) {
	for value, want := range map[string]int{"": 500, "1": 1, "5000": 5000} {
		if got, err := positive("SKEWPROOF_X", value, 500); err != nil || got != want {
			t.Errorf("positive(%q) = %d, %v; want %d", value, got, err, want)
		}
	}
	for _, value := range []string{"0", "-3", "many", "1.5"} {
		if _, err := positive("SKEWPROOF_X", value, 500); err == nil || !strings.Contains(err.Error(), `SKEWPROOF_X="`+value+`"`) {
			t.Errorf("positive(%q): %v, want an error naming the variable and its value", value, err)
		}
	}
}
