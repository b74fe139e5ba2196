package clusters

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/skewproof/skewproof/internal/progress"
)

// fakeDocker is the docker command kind runs in TestCreateOnNetworkConcurrent:
// it logs every call and makes the two creates meet where the race was.
//
//   - `docker inspect --type=image` of a node image is kind's last step
//     before it reads KIND_EXPERIMENTAL_DOCKER_NETWORK. The first cluster's
//     waits (up to WAIT) for the second cluster's create to get there; the
//     second's then waits (up to WAIT) for the first to have read the
//     variable (its next call, `docker network ls`). Without a lock the
//     second has set the variable by then and not yet read it, and the
//     first reads the second's network. With the lock the second cannot
//     get there before the first has read: the first's wait runs out.
//   - `docker run` of the first cluster's node, long after kind read the
//     variable, waits (up to WAIT) for the second's `docker run`: the second
//     must get there while the first is still in kind's Create, that is, the
//     lock was let go when kind had read the variable, not when Create
//     returned. A wait that runs out leaves the file first-run-waited.
//   - `docker run` fails, which ends each Create there (kind then deletes
//     what it made: nothing).
const fakeDocker = `#!/bin/sh
D='DIR'
echo "$*" >> "$D/calls"
wait_for() { i=0; while [ ! -e "$D/$1" ] && [ $i -lt WAIT ]; do sleep 0.05; i=$((i+1)); done; [ -e "$D/$1" ]; }
case "$1 $2" in
"info --format")
	[ "$3" = "{{json .}}" ] || exit 1
	echo '{"CgroupDriver":"systemd","CgroupVersion":"2","MemoryLimit":true,"PidsLimit":true,"CPUShares":true}' ;;
"info "*) exit 1 ;;
"inspect --type=image")
	case "$3" in
	*first*) wait_for second-started ;;
	*second*) touch "$D/second-started"; wait_for network-ls ;;
	esac
	exit 0 ;;
"network ls") touch "$D/network-ls" ;;
"run "*)
	case "$*" in
	*cluster=first*) wait_for second-ran || touch "$D/first-run-waited" ;;
	*cluster=second*) touch "$D/second-ran" ;;
	esac
	exit 1 ;;
esac
exit 0
`

// TestCreateOnNetworkConcurrent makes two clusters at once through kind's
// real Create (v0.33.0), with a fake docker that holds the first one at the
// point where kind reads the network from the environment until the second
// has got as far: each cluster's node must still be run on its own network.
func TestCreateOnNetworkConcurrent(t *testing.T) {
	dir := t.TempDir()
	const waitTicks = 30 // of 50 ms: the fake's waits, 1.5 s
	script := strings.NewReplacer("DIR", dir, "WAIT", strconv.Itoa(waitTicks)).Replace(fakeDocker)
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(kindNetworkEnv, "") // restored afterwards; unset here, and checked to be unset after
	os.Unsetenv(kindNetworkEnv)
	create := func(name string) (time.Duration, error) {
		cfg := &v1alpha4.Cluster{Nodes: []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: "fake/" + name + ":v1"}}}
		v1alpha4.SetDefaultsCluster(cfg)
		for i := range cfg.Nodes {
			v1alpha4.SetDefaultsNode(&cfg.Nodes[i])
		}
		return createOnNetwork(progress.New(&strings.Builder{}), name, networkName(name),
			cluster.CreateWithV1Alpha4Config(cfg),
			cluster.CreateWithKubeconfigPath(filepath.Join(dir, name+".kubeconfig")),
			cluster.CreateWithDisplayUsage(false), cluster.CreateWithDisplaySalutation(false))
	}

	var wg sync.WaitGroup
	var heldFirst time.Duration
	wg.Add(2)
	go func() { defer wg.Done(); heldFirst, _ = create("first") }()
	// The second starts once the first is waiting in front of kind's read.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readFile(t, filepath.Join(dir, "calls")), "inspect --type=image fake/first") {
		if time.Now().After(deadline) {
			t.Fatalf("kind never checked the first cluster's image; docker calls:\n%s", readFile(t, filepath.Join(dir, "calls")))
		}
		time.Sleep(10 * time.Millisecond)
	}
	go func() { defer wg.Done(); create("second") }()
	wg.Wait()

	calls := readFile(t, filepath.Join(dir, "calls"))
	net := regexp.MustCompile(`--net (\S+)`)
	for _, name := range []string{"first", "second"} {
		var nets []string
		for _, l := range strings.Split(calls, "\n") {
			if strings.HasPrefix(l, "run ") && strings.Contains(l, "io.x-k8s.kind.cluster="+name+" ") {
				if m := net.FindStringSubmatch(l); m != nil {
					nets = append(nets, m[1])
				}
			}
		}
		if len(nets) == 0 {
			t.Fatalf("no docker run of cluster %s; docker calls:\n%s", name, calls)
		}
		for _, n := range nets {
			if n != networkName(name) {
				t.Errorf("cluster %s: node run on network %s, want %s (another cluster's network: the environment was shared)", name, n, networkName(name))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "first-run-waited")); err == nil {
		t.Errorf("the second cluster's node was run only after the first's Create returned: the lock was held past kind's read of %s (held %v; does kind still log a warning naming it?)", kindNetworkEnv, heldFirst)
	}
	if v, ok := os.LookupEnv(kindNetworkEnv); ok {
		t.Errorf("%s=%q left in the environment after the creates", kindNetworkEnv, v)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
