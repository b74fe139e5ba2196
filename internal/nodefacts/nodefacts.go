// Package nodefacts is what the runner, the suites and the cluster builder
// agree on about the nodes skewproof makes, without the machinery that
// makes them: the node labels, a node's role and readiness, the runtime
// handlers and RuntimeClasses every node image has, the images every node
// holds, and the facts of the host. The suites need these and nothing else
// of package clusters.
package nodefacts

import (
	"os"
	"strings"

	"github.com/skewproof/skewproof/skew"
)

// Labels skewproof sets on the nodes of the clusters it makes.
const (
	// KubeletVersionLabel holds the node's kubelet version as skewproof
	// built it (e.g. v1.34.4).
	KubeletVersionLabel = "skewproof.io/kubelet-version"
	// AppArmorKernelLabel is "true" on a node whose kernel enforces
	// AppArmor because skewproof made it so (the User-Mode Linux node).
	AppArmorKernelLabel = "skewproof.io/apparmor-kernel"
	// CRIRuntimeLabel names a node's CRI runtime as skewproof built it
	// ("containerd").
	CRIRuntimeLabel = "skewproof.io/cri-runtime"
	// OCIRuntimeLabel names a node's OCI runtime (e.g. "runc", "crun"),
	// which the CRI does not report, and OCIRuntimeVersionLabel its version
	// (e.g. "1.1.15"); both optional. They are the oracle's runtime facts
	// (skew.HostFacts) of the node, and a vendor may set them on its own.
	OCIRuntimeLabel        = "skewproof.io/oci-runtime"
	OCIRuntimeVersionLabel = "skewproof.io/oci-runtime-version"
)

// BusyBoxImage is the image every node holds for the scenarios' pods.
const BusyBoxImage = "skewproof.local/busybox:1"

// Host reads this host's facts (cgroup version, seccomp, AppArmor) from
// /proc and /sys, without Docker.
func Host() skew.HostFacts {
	f := skew.HostFacts{CgroupVersion: 1}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		f.CgroupVersion = 2
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil && strings.Contains(string(b), "\nSeccomp:") {
		f.Seccomp = true
	}
	if b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled"); err == nil && strings.TrimSpace(string(b)) == "Y" {
		f.AppArmor = true
	}
	return f
}
