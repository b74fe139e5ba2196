// The Docker network of a cluster's nodes, as kind is told it: through the
// process environment, under a lock, for as long as kind takes to read it.

package clusters

import (
	"os"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/skewproof/skewproof/internal/progress"
)

// kindNetworkEnv names the Docker network kind's Docker provider puts a
// cluster's nodes on. kind v0.33.0 offers no other way to choose it: no
// provider or create option, and its providers are internal packages.
const kindNetworkEnv = "KIND_EXPERIMENTAL_DOCKER_NETWORK"

// kindNetworkMu is held from the moment createOnNetwork sets kindNetworkEnv
// until kind has read it, so that clusters made at the same time (run
// --matrix-parallel) each get their own network.
//
// Where kind reads it (v0.33.0, pkg/cluster/internal/providers/docker):
// once per Create, in the provider's Provision, after it has checked the
// provider (docker info), that no cluster of the name exists (docker ps) and
// that the node images are there (docker inspect); it keeps the value in a
// local variable for ensureNetwork and the `docker run --net` of every node,
// and right after reading it logs a warning naming the variable. That
// warning, seen by kindLogger, releases the lock: the node containers' boot,
// kubeadm init and joins (the slow part of a create, 15-30 s) run outside
// it. Should a later kind no longer log the warning, the lock is held until
// Create returns: clusters are then made one after another, slower but never
// on each other's network. kind's Delete does not read the variable (it
// removes the containers by their cluster label; Down removes the network
// itself), so Down takes no lock.
var kindNetworkMu sync.Mutex

// createOnNetwork runs kind's Create for the cluster name with its nodes on
// the Docker network network. It returns how long it held kindNetworkMu.
func createOnNetwork(p *progress.Progress, name, network string, opts ...cluster.CreateOption) (held time.Duration, err error) {
	kindNetworkMu.Lock()
	start := time.Now()
	prev, hadPrev := os.LookupEnv(kindNetworkEnv)
	var once sync.Once
	release := func() {
		once.Do(func() {
			if hadPrev {
				_ = os.Setenv(kindNetworkEnv, prev)
			} else {
				_ = os.Unsetenv(kindNetworkEnv)
			}
			held = time.Since(start)
			kindNetworkMu.Unlock()
		})
	}
	defer release()
	_ = os.Setenv(kindNetworkEnv, network)
	prov := cluster.NewProvider(cluster.ProviderWithDocker(),
		cluster.ProviderWithLogger(kindLogger{p: p, networkRead: release}))
	err = prov.Create(name, opts...)
	return held, err
}

// isNetworkRead reports whether a warning of kind's says that it has read
// kindNetworkEnv ("WARNING: Overriding docker network due to
// KIND_EXPERIMENTAL_DOCKER_NETWORK").
func isNetworkRead(m string) bool { return strings.Contains(m, kindNetworkEnv) }
