// Node files for kubelets of old releases.

package nodeimage

import (
	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// cgroupBindsDropIn is a kubelet.service drop-in that, before the kubelet
// starts, unmounts (systemd unescapes $$ and \\ once) the self bind mounts kind's entrypoint makes of the
// kubelet's cgroup root, /kubelet and /kubelet.slice, in every cgroup v1
// hierarchy (fix_cgroup, mount_kubelet_cgroup_root_subsystem; the cgroups
// themselves stay).
//
// A kubelet before v1.21 takes each cgroup v1 controller's mount point from
// libcontainer's GetCgroupMounts(true) (runc v1.0.0-rc91/rc92), which lists
// every mount of a controller's hierarchy, and keeps the last it lists
// (pkg/kubelet/cm/helpers_linux.go, getCgroupSubsystemsV1): with those bind
// mounts, the cpu controller's mount point became /sys/fs/cgroup/cpu/kubelet,
// and the kubelet refused to start on a cgroup v1 host with "invalid
// configuration: cgroup-root ["kubelet"] doesn't exist" (missing path
// /sys/fs/cgroup/cpu/kubelet/kubelet.slice).
const cgroupBindsDropIn = `# written by skewproof: see clusters/internal/nodeimage/oldkubelets.go
[Service]
ExecStartPre=/bin/sh -c 'for m in $$(findmnt -lun -o target -t cgroup | grep -E "/kubelet(\\.slice)?$$"); do umount "$$m"; done'
`

// cgroupBindsDropInPath is where the drop-in goes in the node.
const cgroupBindsDropInPath = "/etc/systemd/system/kubelet.service.d/20-skewproof-cgroup-binds.conf"

// cgroupBindsHarmless is the first release whose kubelet takes another
// libcontainer (runc v1.0.2 from v1.21 on); whether it is misled by the
// bind mounts too is for a v1.21-v1.23 cluster to show.
var cgroupBindsHarmless = release.Minor{Major: 1, Minor: 21}

// needsCgroupBindsDropIn reports whether kubelet kl (e.g. v1.19.16) needs
// cgroupBindsDropIn.
func needsCgroupBindsDropIn(kl string) bool {
	v, err := version.NewVersion(release.BareVersion(kl))
	if err != nil {
		return false
	}
	return release.MinorOf(v).Less(cgroupBindsHarmless)
}
