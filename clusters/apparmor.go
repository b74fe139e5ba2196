package clusters

import (
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// On a host whose kernel has AppArmor, a kind node's runtime does not see
// it by itself: kind mounts no securityfs into node containers, and
// containerd (like runc) applies AppArmor only when
// /sys/kernel/security/apparmor exists and its environment has no
// "container" variable (containerd pkg/apparmor, hostSupports). The node
// image sets container=docker for its init; systemd 257 of skewproof's
// node images does not pass it on to containerd.service, a node whose
// systemd does would lose AppArmor. nodeAppArmorMounts gives every node the
// host's securityfs and a containerd drop-in that unsets the variable; both
// are bind mounts made when the node container is created, so the node
// image stays the same. TestIntegrationAppArmorHost runs them on a kernel
// that enforces AppArmor.

// securityFS is where securityfs is mounted, on the host and in nodes.
const securityFS = "/sys/kernel/security"

// containerdAppArmorDropIn is the containerd.service drop-in of nodes on
// an AppArmor host.
const containerdAppArmorDropIn = `# skewproof: containerd applies AppArmor only without $container (kind sets container=docker)
[Service]
UnsetEnvironment=container
`

// containerdDropInPath is where the drop-in is mounted in a node.
const containerdDropInPath = "/etc/systemd/system/containerd.service.d/20-skewproof-apparmor.conf"

// writeContainerdAppArmorDropIn writes the drop-in into the cache
// directory (a fixed path: the nodes' bind mounts refer to it as long as
// they exist) and returns its path.
func writeContainerdAppArmorDropIn() (string, error) {
	return writeCacheFile("containerd-apparmor.conf", containerdAppArmorDropIn)
}

// nodeAppArmorMounts are the extra mounts of a node on an AppArmor host:
// the host's securityfs and the containerd drop-in at dropIn.
func nodeAppArmorMounts(dropIn string) []v1alpha4.Mount {
	return []v1alpha4.Mount{
		{HostPath: securityFS, ContainerPath: securityFS},
		{HostPath: dropIn, ContainerPath: containerdDropInPath, Readonly: true},
	}
}
