package clusters

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// NodeMemoryMiB is what one kind node of a skewproof cluster uses while the
// suites run (measured: docs/measurements.md, "Memory per node").
const NodeMemoryMiB = 700

// ClustersThatFit returns how many clusters of the given number of nodes
// fit in the host's available memory at once (at least 1), and that memory
// in MiB (0 when unknown: then 1 fits).
func ClustersThatFit(nodes int) (fit, availMiB int) {
	availMiB = availableMiB()
	if availMiB == 0 || nodes < 1 {
		return 1, availMiB
	}
	return max(1, availMiB/(nodes*NodeMemoryMiB)), availMiB
}

// memoryCheck says how many clusters of the default size (5 nodes) fit.
func memoryCheck() Check {
	const nodes = 5
	fit, avail := ClustersThatFit(nodes)
	if avail == 0 {
		return Check{"memory", "unknown (no /proc/meminfo)", Warn, ""}
	}
	c := Check{"memory", fmt.Sprintf("%d MiB available: %d cluster(s) of %d nodes at once (%d MiB a node)", avail, fit, nodes, NodeMemoryMiB), OK, ""}
	if avail < nodes*NodeMemoryMiB {
		c.Status, c.Remedy = Warn, "a 5-node cluster may not fit; run fewer kubelets or free memory"
	}
	return c
}

// availableMiB is MemAvailable of /proc/meminfo.
func availableMiB() int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb / 1024
		}
	}
	return 0
}
