package capacity

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// What the kind nodes of a skewproof cluster hold of the host's inotify
// instances: every process of a kind node (a privileged container) runs as
// the host's root in the host's user namespace, so the nodes of every
// cluster at once share root's fs.inotify.max_user_instances (128 by
// default). Counted by the anon_inode:inotify descriptors of each node's
// processes while the history preset's v1.29, v1.30 and v1.31 clusters ran
// at once: 26-27 per control plane, 12-14 per worker (docs/reliability.md,
// "inotify instances"); rounded up. A User-Mode Linux node has a kernel of
// its own and holds none of the host's.
//
// When they run out, a node's kube-proxy exits at once with "failed
// complete: too many open files" and a kubelet stays NotReady: kind's known
// issue "Pod errors due to too many open files", whose remedy is
// fs.inotify.max_user_instances=512.
const (
	controlPlaneInotifyInstances = 30
	workerInotifyInstances       = 15
	// hostInotifyInstances is what root's own processes on the host
	// (systemd, udev, dockerd, containerd) are left.
	hostInotifyInstances = 20
	// RecommendedInotifyInstances is kind's remedy for its known issue.
	RecommendedInotifyInstances = 512
)

// inotifyInstancesFile is where the host's limit is read (a variable for
// tests).
var inotifyInstancesFile = "/proc/sys/fs/inotify/max_user_instances"

// ClusterInotifyInstances is what a cluster of a control plane and that
// many kind workers holds.
func ClusterInotifyInstances(kindWorkers int) int {
	return controlPlaneInotifyInstances + kindWorkers*workerInotifyInstances
}

// InotifyLimit is fs.inotify.max_user_instances (0 when unknown).
func InotifyLimit() int {
	b, err := os.ReadFile(inotifyInstancesFile)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return n
}

// ClustersThatFitInotify returns how many clusters of a control plane and
// that many kind workers the host's inotify instances hold at once (at
// least 1), and the limit (0 when unknown: then 1 fits).
func ClustersThatFitInotify(kindWorkers int) (fit, limit int) {
	limit = InotifyLimit()
	if limit == 0 {
		return 1, 0
	}
	return max(1, (limit-hostInotifyInstances)/ClusterInotifyInstances(kindWorkers)), limit
}

// InotifyRemedy is the line that tells how to raise the limit.
func InotifyRemedy() string {
	return fmt.Sprintf("raise it with 'sudo sysctl -w fs.inotify.max_user_instances=%d' (kind's known issue \"too many open files\"; hack/setup-host.sh does)", RecommendedInotifyInstances)
}

// CheckInotifyFits refuses clusters that would run the host out of inotify
// instances, with the numbers and the remedy, before anything is built.
func CheckInotifyFits(clusters, kindWorkers int) error {
	limit := InotifyLimit()
	need := clusters*ClusterInotifyInstances(kindWorkers) + hostInotifyInstances
	if limit == 0 || need <= limit {
		return nil
	}
	what := fmt.Sprintf("a cluster of 1+%d kind nodes holds", kindWorkers)
	if clusters > 1 {
		what = fmt.Sprintf("%d clusters of 1+%d kind nodes at once hold", clusters, kindWorkers)
	}
	return fmt.Errorf("%s about %d inotify instances (%d a control plane, %d a worker, %d left to the host), fs.inotify.max_user_instances is %d: %s",
		what, need, controlPlaneInotifyInstances, workerInotifyInstances, hostInotifyInstances, limit, InotifyRemedy())
}
