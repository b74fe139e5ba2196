#!/bin/sh
# skewproof User-Mode Linux node: what kind's entrypoint does for a node
# container, done for a booted kernel, from the skewproof.* parameters of the
# kernel command line. Runs before containerd and the kubelet.
set -eu
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^skewproof\.$1=//p" | tail -1; }
name=$(arg name) addr=$(arg addr) gw=$(arg gw)
echo "skewproof: node $name set-up"
hostname "$name"
echo "$name" > /etc/hostname
# AppArmor: kind's image does not mount securityfs (it is made for
# containers); containerd and the kubelet look for /sys/kernel/security/apparmor.
mountpoint -q /sys/kernel/security || mount -t securityfs securityfs /sys/kernel/security
# cAdvisor (in the kubelet) needs a clock speed; UML's /proc/cpuinfo has none
# and its sysfs no cpufreq (cadvisor machine.GetClockSpeed).
if ! grep -q MHz /proc/cpuinfo; then
	{ cat /proc/cpuinfo; printf 'cpu MHz\t\t: 1000.000\n'; } > /run/skewproof-cpuinfo
	mount --bind /run/skewproof-cpuinfo /proc/cpuinfo
fi
# The OCI hook of kind's /etc/containerd/cri-base.json copies these into
# every container (kind's entrypoint: fix_product_name, fix_product_uuid).
echo kind > /kind/product_name
cat /proc/sys/kernel/random/uuid > /kind/product_uuid
ip link set lo up
# the vector driver's interface (vec0); eth0 with the old tuntap driver
dev=vec0
[ -e /sys/class/net/$dev ] || dev=eth0
ip addr add "$addr" dev "$dev"
ip link set "$dev" up
ip route add default via "$gw"
# The UML kernel has no nf_tables: iptables in legacy mode (kind's
# entrypoint: select_iptables).
for t in iptables ip6tables; do update-alternatives --quiet --set "$t" "/usr/sbin/$t-legacy"; done
sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
echo "KUBELET_EXTRA_ARGS=--node-ip=${addr%/*} --node-labels=$(arg labels)" > /etc/default/kubelet
echo "skewproof: $(nproc) CPUs, kernel $(uname -r)"
echo "skewproof: AppArmor $(cat /sys/module/apparmor/parameters/enabled), LSMs $(cat /sys/kernel/security/lsm)"
