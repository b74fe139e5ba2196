package clusters

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// What the nodes of a skewproof cluster use while the suites run: the peak
// working set (docker stats) of each node during make conformance
// MATRIX=1.36..1.37 was 733 MiB for a control plane and 219-264 MiB for a
// worker (docs/measurements.md, "Memory per node"); rounded up.
const (
	ControlPlaneMemoryMiB = 800
	WorkerMemoryMiB       = 300
)

// ClusterMemoryMiB is what a cluster with that many workers needs.
func ClusterMemoryMiB(workers int) int {
	return ControlPlaneMemoryMiB + workers*WorkerMemoryMiB
}

// ClustersThatFit returns how many clusters with that many workers fit in
// the host's available memory at once (at least 1), and that memory in MiB
// (0 when unknown: then 1 fits).
func ClustersThatFit(workers int) (fit, availMiB int) {
	availMiB = availableMiB()
	if availMiB == 0 {
		return 1, availMiB
	}
	return max(1, availMiB/ClusterMemoryMiB(workers)), availMiB
}

// CheckClusterFits refuses a cluster that does not fit in the available
// memory, with the numbers, before anything is built.
func CheckClusterFits(workers int) error {
	need, avail := ClusterMemoryMiB(workers), availableMiB()
	if avail > 0 && avail < need {
		return fmt.Errorf("a cluster with %d worker(s) needs about %d MiB (%d for the control plane, %d a worker), the host has %d MiB available; free memory or give fewer kubelets",
			workers, need, ControlPlaneMemoryMiB, WorkerMemoryMiB, avail)
	}
	return nil
}

// memoryCheck says how many clusters of the default size (4 workers) fit.
func memoryCheck() Check {
	const workers = 4
	fit, avail := ClustersThatFit(workers)
	if avail == 0 {
		return Check{"memory", "unknown (no /proc/meminfo)", Warn, ""}
	}
	c := Check{"memory", fmt.Sprintf("%d MiB available: %d cluster(s) of 1+%d nodes at once (%d MiB each)", avail, fit, workers, ClusterMemoryMiB(workers)), OK, ""}
	if avail < ClusterMemoryMiB(workers) {
		c.Status, c.Remedy = Warn, "the default cluster may not fit; give fewer kubelets or free memory"
	}
	return c
}

// availableMiB is MemAvailable of /proc/meminfo (0 when unknown).
func availableMiB() int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb / 1024
		}
	}
	return 0
}
