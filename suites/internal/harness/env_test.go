package harness

import (
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
