package nodeimage

import (
	"context"
	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"testing"
)

// A worker on another runtime has a node image of its own, which the disk
// estimate counts.
func TestPlanBuildsCountsRuntimeImages(t *testing.T) {
	t.Setenv("SKEWPROOF_CACHE_DIR", t.TempDir())
	plain, err := Plan(context.Background(), command.Host{}, "1.99.1", []string{"1.99.1", "1.99.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := Plan(context.Background(), command.Host{}, "1.99.1", []string{"1.99.1", "1.99.1"}, nil, noderuntime.Runtime{}, noderuntime.Runtime{CRI: noderuntime.CRICRIO, OCI: noderuntime.OCICrun})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.NodeImages) != 1 || len(mixed.NodeImages) != 2 || mixed.NodeImages[1] != "v1.99.1-kubelet-v1.99.1-crio-crun" {
		t.Errorf("node images: %v without runtimes, %v with a CRI-O worker; want one, and that one plus v1.99.1-kubelet-v1.99.1-crio-crun", plain.NodeImages, mixed.NodeImages)
	}
}
