//go:build integration

package clusters

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/internal/progress"
)

// Two clusters made at once, as `run --matrix-parallel 2` makes them: every
// node container of each must be on its own cluster's Docker network and on
// no other (kindnetwork.go). Each cluster is a control plane alone at
// v1.37.2, the cheapest cluster Up makes, from the node image make
// conformance builds. Their kind creates start at the same moment
// (beforeKindCreate), as the legs of a matrix, which start together and do
// the same steps before it, reach them at nearly the same time.
func TestIntegrationConcurrentClustersOwnNetworks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	suffix := time.Now().Unix() % 100000
	names := []string{fmt.Sprintf("race-a-%d", suffix), fmt.Sprintf("race-b-%d", suffix)}
	kubeconfigs := []string{t.TempDir() + "/kubeconfig", t.TempDir() + "/kubeconfig"}

	// A barrier in front of kind's Create: it opens when both Ups are there,
	// or after a minute should one of them fail before.
	var mu sync.Mutex
	arrived := 0
	together := make(chan struct{})
	beforeKindCreate = func(string) {
		mu.Lock()
		if arrived++; arrived == len(names) {
			close(together)
		}
		mu.Unlock()
		select {
		case <-together:
		case <-time.After(time.Minute):
		}
	}
	t.Cleanup(func() { beforeKindCreate = nil })

	// Deleted whatever happens, in two rounds: should a node have landed on
	// the other cluster's network, that network is removed only once the
	// other cluster's nodes are gone too.
	t.Cleanup(func() {
		for round := 1; round <= 2; round++ {
			for i, name := range names {
				if err := down(context.Background(), name, kubeconfigs[i], nil); err != nil && round == 2 {
					t.Errorf("cluster down %s: %v", name, err)
				}
			}
		}
		for _, name := range names {
			for _, args := range [][]string{
				{"ps", "-a", "-q", "--filter", "label=io.x-k8s.kind.cluster=" + name},
				{"network", "ls", "-q", "--filter", "name=^" + NetworkName(name) + "$"},
			} {
				if out, err := command.Docker(context.Background(), args...); err != nil || out != "" {
					t.Errorf("left behind after down: docker %v: %q (%v)", args, out, err)
				}
			}
		}
	})

	logs := make([]bytes.Buffer, len(names))
	errs := make([]error, len(names))
	start := time.Now()
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := progress.New(io.MultiWriter(progress.Prefixed(os.Stderr, nil, name+": "), &logs[i]))
			_, errs[i] = up(ctx, p, UpOptions{Name: name, APIServer: "1.37.2", Kubeconfig: kubeconfigs[i], Temporary: true})
		}()
	}
	wg.Wait()
	t.Logf("both clusters up in %.1fs", time.Since(start).Seconds())
	created := regexp.MustCompile(`kind create done in .*`)
	for i, name := range names {
		if errs[i] != nil {
			t.Errorf("cluster up %s: %v", name, errs[i])
		}
		t.Logf("%s: %s", name, created.Find(logs[i].Bytes()))
	}

	for _, name := range names {
		ids, err := command.Docker(ctx, "ps", "-a", "-q", "--filter", "label=io.x-k8s.kind.cluster="+name)
		if err != nil || len(strings.Fields(ids)) == 0 {
			t.Errorf("node containers of %s: %q (%v)", name, ids, err)
			continue
		}
		for _, id := range strings.Fields(ids) {
			out, err := command.Docker(ctx, "inspect", "--format", `{{.Name}}{{range $net, $_ := .NetworkSettings.Networks}} {{$net}}{{end}}`, id)
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(out)
			node, nets := strings.TrimPrefix(f[0], "/"), f[1:]
			if !slices.Equal(nets, []string{NetworkName(name)}) {
				t.Errorf("node %s of cluster %s is on networks %v, want %s alone", node, name, nets, NetworkName(name))
			}
		}
	}
}
