package runner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/skew/release"
)

func TestLegName(t *testing.T) {
	for in, want := range map[string]string{"1.37.2": "skewproof-1-37", "1.36": "skewproof-1-36"} {
		if got := LegName("skewproof", release.Cluster{Apiserver: in}); got != want {
			t.Errorf("LegName(%s) = %s, want %s", in, got, want)
		}
	}
}

// An interrupted matrix starts no cluster and says so for every leg.
func TestRunMatrixInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	legs, err := RunMatrix(ctx, MatrixOptions{Base: Options{Name: "m", JUnitDir: t.TempDir()},
		Clusters: []release.Cluster{{Apiserver: "1.36.3"}, {Apiserver: "1.37.2"}}, AppArmorNodes: []bool{false, true}})
	if err == nil || len(legs) != 2 || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("legs %+v, err %v", legs, err)
	}
	if legs[0].AppArmorNodes || !legs[1].AppArmorNodes {
		t.Errorf("AppArmor nodes per leg: %v, %v; want false, true", legs[0].AppArmorNodes, legs[1].AppArmorNodes)
	}
	if legs[1].Name != "m-1-37" || !strings.HasSuffix(legs[1].Dir, "/m-1-37") {
		t.Errorf("leg 2: %+v", legs[1])
	}
}

// With runtimes, every cluster fans out into one leg per runtime, named
// after it.
func TestRunMatrixRuntimes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	legs, _ := RunMatrix(ctx, MatrixOptions{Base: Options{Name: "m", JUnitDir: t.TempDir()},
		Clusters: []release.Cluster{{Apiserver: "1.36.3"}, {Apiserver: "1.37.2"}},
		Runtimes: []noderuntime.Runtime{{}, {CRI: "containerd2", OCI: "crun"}}})
	var names []string
	for _, l := range legs {
		names = append(names, l.Name)
	}
	if got := strings.Join(names, " "); got != "m-1-36-containerd-runc m-1-36-containerd2-crun m-1-37-containerd-runc m-1-37-containerd2-crun" {
		t.Errorf("legs %s", got)
	}
}

// With AppArmorNodes, every leg's cluster has one AppArmor node per worker
// of its own window, on the leg's runtime; without, none.
func TestLegUpAppArmorNodes(t *testing.T) {
	crun := noderuntime.Runtime{CRI: "containerd2", OCI: "crun"}
	o := MatrixOptions{Base: Options{Up: clusters.UpOptions{UMLKernel: "/k"}}}
	leg := Leg{Cluster: release.Cluster{Apiserver: "1.36.3", Kubelets: []string{"1.33.13", "1.36.3"}}, Runtime: crun, AppArmorNodes: true}
	up := o.legUp(leg)
	want := []noderuntime.Worker{{Kubelet: "1.33.13", Runtime: crun}, {Kubelet: "1.36.3", Runtime: crun}}
	if !slices.Equal(up.AppArmorNodes, want) || up.APIServer != "1.36.3" || len(up.Runtimes) != 2 || up.UMLKernel != "/k" {
		t.Errorf("leg cluster %+v, want AppArmor nodes %v", up, want)
	}
	leg.AppArmorNodes = false
	if up := o.legUp(leg); up.AppArmorNodes != nil {
		t.Errorf("without AppArmorNodes: %v", up.AppArmorNodes)
	}
}
