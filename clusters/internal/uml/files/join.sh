#!/bin/sh
# skewproof User-Mode Linux node: join the cluster with kubeadm, then wait
# for this node's podCIDR (the host writes the CNI configuration for it, as
# on kind nodes). The host runs it through the exec directory
# once the control plane serves (the node boots while kind makes the
# others): join.sh ENDPOINT TOKEN CONTROL-PLANE-NAME CONTROL-PLANE-IP.
# The host routes the other nodes' pod CIDRs (a node may read only its own
# Node object).
set -eu
endpoint=$1 token=$2 cpname=$3 cpip=$4
say() { echo "skewproof: $*" > /dev/console 2>/dev/null || true; }
name=$(hostname)
# the control plane's name (kubeadm's cluster-info endpoint) and address
grep -q " $cpname\$" /etc/hosts || echo "$cpip $cpname" >> /etc/hosts
# the container runtime of the image (containerd, or CRI-O) is up
for u in containerd crio; do
	if systemctl is-enabled -q "$u" 2>/dev/null; then
		until systemctl is-active -q "$u"; do sleep 0.5; done
	fi
done
if [ ! -f /etc/kubernetes/kubelet.conf ]; then
	say "kubeadm join $endpoint"
	kubeadm join "$endpoint" --token "$token" --discovery-token-unsafe-skip-ca-verification \
		--node-name "$name" --cri-socket unix:///run/containerd/containerd.sock --ignore-preflight-errors=all > /run/skewproof-join.log 2>&1 ||
		{ tail -20 /run/skewproof-join.log >&2; exit 1; }
fi
k="kubectl --kubeconfig /etc/kubernetes/kubelet.conf"
until cidr=$($k get node "$name" -o jsonpath='{.spec.podCIDR}' 2>/dev/null) && [ -n "$cidr" ]; do sleep 1; done
say "joined, pod CIDR $cidr"
echo "$cidr"
