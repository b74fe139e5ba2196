//go:build integration

package nodeimage

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/internal/progress"
)

// images prune --keep N keeps the newest N images of the repository and
// removes the others (three empty images built here, never pulled).
func TestIntegrationPruneKeepsNewest(t *testing.T) {
	ctx := context.Background()
	const repo = "skewproof-prune-test"
	t.Cleanup(func() {
		out, _ := host.Docker(ctx, "images", repo, "--format", "{{.Repository}}:{{.Tag}}")
		for _, ref := range strings.Fields(out) {
			host.Docker(ctx, "rmi", ref)
		}
	})
	for i := 1; i <= 3; i++ {
		// An empty image from an empty tar; creation times one second apart.
		cmd := exec.Command("sh", "-c", fmt.Sprintf("tar cf - --files-from /dev/null | docker import -m %d - %s:v%d", i, repo, i))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("docker import: %v\n%s", err, out)
		}
		time.Sleep(1100 * time.Millisecond)
	}
	if err := pruneNodeImages(ctx, command.Host{Progress: progress.New(nil)}, repo, 1); err != nil {
		t.Fatal(err)
	}
	out, err := host.Docker(ctx, "images", repo, "--format", "{{.Tag}}")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out); len(got) != 1 || got[0] != "v3" {
		t.Errorf("after prune --keep 1: %v; want only the newest, v3", got)
	}
}
