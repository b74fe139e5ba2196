//go:build integration

package clusters

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"
)

// Two clusters made at once, as `run --matrix-parallel 2` makes them: every
// node container of each must be on its own cluster's Docker network and on
// no other (kindnetwork.go). Each cluster is a control plane alone at
// v1.37.2, the cheapest cluster Up makes, from the node image make
// conformance builds. The test does what Up does up to kind's Create
// (nodeImages, kindConfig) for both, then starts both creates (createNodes,
// as Up calls it) at the same moment, as the legs of a matrix, which start
// together and do the same steps before it, reach them at nearly the same
// time. Pod networking and readiness, which Up waits for afterwards, have
// no part in which network a node is on.
func TestIntegrationConcurrentClustersOwnNetworks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	suffix := time.Now().Unix() % 100000
	names := []string{fmt.Sprintf("race-a-%d", suffix), fmt.Sprintf("race-b-%d", suffix)}
	kubeconfigs := []string{t.TempDir() + "/kubeconfig", t.TempDir() + "/kubeconfig"}

	// Deleted whatever happens, in two rounds: should a node have landed on
	// the other cluster's network, that network is removed only once the
	// other cluster's nodes are gone too.
	t.Cleanup(func() {
		for round := 1; round <= 2; round++ {
			for i, name := range names {
				if err := down(context.Background(), command.Host{}, name, kubeconfigs[i]); err != nil && round == 2 {
					t.Errorf("cluster down %s: %v", name, err)
				}
			}
		}
		for _, name := range names {
			for _, args := range [][]string{
				{"ps", "-a", "-q", "--filter", "label=io.x-k8s.kind.cluster=" + name},
				{"network", "ls", "-q", "--filter", "name=^" + networkName(name) + "$"},
			} {
				if out, err := Docker(context.Background(), args...); err != nil || out != "" {
					t.Errorf("left behind after down: docker %v: %q (%v)", args, out, err)
				}
			}
		}
	})

	// What Up does before kind's Create, for one cluster after the other.
	opts := make([]UpOptions, len(names))
	cfgs := make([]*v1alpha4.Cluster, len(names))
	for i, name := range names {
		opts[i] = UpOptions{Name: name, APIServer: "1.37.2", Kubeconfig: kubeconfigs[i]}
		images, err := nodeImages(ctx, command.Host{Progress: progress.New(progress.Prefixed(os.Stderr, nil, name+": "))}, opts[i])
		if err != nil {
			t.Fatalf("node images of %s: %v", name, err)
		}
		if cfgs[i], err = kindConfig(ctx, command.Host{}, opts[i], images, nodefacts.Host()); err != nil {
			t.Fatalf("kind config of %s: %v", name, err)
		}
	}

	// Both creates start when together closes.
	together := make(chan struct{})
	errs := make([]error, len(names))
	held := make([]time.Duration, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-together
			p := progress.New(progress.Prefixed(os.Stderr, nil, name+": "))
			held[i], errs[i] = createNodes(p, opts[i], cfgs[i])
		}()
	}
	start := time.Now()
	close(together)
	wg.Wait()
	t.Logf("both clusters' nodes created in %.1fs", time.Since(start).Seconds())
	for i, name := range names {
		if errs[i] != nil {
			t.Errorf("creating the nodes of %s: %v", name, errs[i])
		}
		t.Logf("%s: Docker network lock held %.2fs", name, held[i].Seconds())
	}

	for _, name := range names {
		ids, err := Docker(ctx, "ps", "-a", "-q", "--filter", "label=io.x-k8s.kind.cluster="+name)
		if err != nil || len(strings.Fields(ids)) == 0 {
			t.Errorf("node containers of %s: %q (%v)", name, ids, err)
			continue
		}
		for _, id := range strings.Fields(ids) {
			out, err := Docker(ctx, "inspect", "--format", `{{.Name}}{{range $net, $_ := .NetworkSettings.Networks}} {{$net}}{{end}}`, id)
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(out)
			node, nets := strings.TrimPrefix(f[0], "/"), f[1:]
			if !slices.Equal(nets, []string{networkName(name)}) {
				t.Errorf("node %s of cluster %s is on networks %v, want %s alone", node, name, nets, networkName(name))
			}
		}
	}
}
