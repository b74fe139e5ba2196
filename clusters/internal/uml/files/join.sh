#!/bin/sh
# skewproof User-Mode Linux node: join the cluster with kubeadm, then write
# the CNI configuration for this node's podCIDR (what skewproof does through
# docker exec on kind nodes). The host routes the other nodes' pod CIDRs
# (a node may read only its own Node object).
set -eu
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^skewproof\.$1=//p" | tail -1; }
name=$(hostname)
if [ ! -f /etc/kubernetes/kubelet.conf ]; then
	echo "skewproof: kubeadm join $(arg endpoint)"
	kubeadm join "$(arg endpoint)" --token "$(arg token)" --discovery-token-unsafe-skip-ca-verification \
		--node-name "$name" --cri-socket unix:///run/containerd/containerd.sock --ignore-preflight-errors=all
fi
k="kubectl --kubeconfig /etc/kubernetes/kubelet.conf"
until cidr=$($k get node "$name" -o jsonpath='{.spec.podCIDR}' 2>/dev/null) && [ -n "$cidr" ]; do sleep 1; done
mkdir -p /etc/cni/net.d
cat > /etc/cni/net.d/10-skewproof.conflist.tmp <<CNI
{"cniVersion": "0.4.0", "name": "skewproof", "plugins": [
  {"type": "ptp", "ipMasq": false, "mtu": 1500, "ipam": {"type": "host-local", "dataDir": "/run/cni-ipam-state",
   "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
CNI
mv /etc/cni/net.d/10-skewproof.conflist.tmp /etc/cni/net.d/10-skewproof.conflist
echo "skewproof: joined, pod CIDR $cidr"
