// Package capacity says whether skewproof's clusters fit on this host,
// before anything is built: the memory their nodes take while the suites
// run (CheckClusterFits, ClustersThatFit) and the disk their builds and
// nodes take (Builds, which clusters' Provider.PlanBuilds fills in, and
// CheckDiskFits). The sizes were measured on the project's build machine
// (docs/measurements.md, docs/reliability.md).
package capacity

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
	controlPlaneMemoryMiB = 800
	WorkerMemoryMiB       = 300
)

// ClusterMemoryMiB is what a cluster with that many workers needs.
func ClusterMemoryMiB(workers int) int {
	return controlPlaneMemoryMiB + workers*WorkerMemoryMiB
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
			workers, need, controlPlaneMemoryMiB, WorkerMemoryMiB, avail)
	}
	return nil
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
