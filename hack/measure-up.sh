#!/usr/bin/env bash
# Measures a warm `skewproof cluster up` (1 control plane + 2 workers, images
# already built) against the plain kind CLI on the same node images: kind
# create with the same configuration, the same per-node CNI configuration
# written by a shell loop, and `kubectl wait` for nodes and kube-system pods.
# Usage: hack/measure-up.sh [APISERVER] [KUBELET,KUBELET]   (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
API=${1:-1.37.2}
KUBELETS=${2:-1.34.4,1.37.2}
BIN=bin/skewproof
TMP=$(mktemp -d)
cleanup() {
	"$BIN" cluster down --name m-skewproof >/dev/null 2>&1 || true
	if [ -x "$TMP/kind" ]; then
		KIND_EXPERIMENTAL_DOCKER_NETWORK=skewproof-m-kind "$TMP/kind" delete cluster --name m-kind >/dev/null 2>&1 || true
	fi
	docker network rm skewproof-m-kind >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
make -s build
CGO_ENABLED=0 go build -o "$TMP/kind" sigs.k8s.io/kind

# Build (or find) the images first; the timings below are warm.
"$BIN" images build --kubernetes "$API" >/dev/null
for k in ${KUBELETS//,/ }; do "$BIN" images build --kubernetes "$API" --kubelet "$k" >/dev/null; done

echo "== skewproof cluster up --apiserver $API --kubelets $KUBELETS"
s=$(date +%s.%N)
"$BIN" cluster up --name m-skewproof --apiserver "$API" --kubelets "$KUBELETS" --kubeconfig "$TMP/sp.kubeconfig" 2>"$TMP/sp.log" >/dev/null
e=$(date +%s.%N)
sp=$(echo "$e - $s" | bc)
grep -E "kind create done|pod networking|waiting for nodes" "$TMP/sp.log" || true
echo "skewproof up: ${sp}s"
"$BIN" cluster down --name m-skewproof --kubeconfig "$TMP/sp.kubeconfig" >/dev/null 2>&1

# The same cluster with the kind CLI.
cfg=$TMP/kind.yaml
img() { docker images --format '{{.Repository}}:{{.Tag}}' skewproof-node | grep -E "^skewproof-node:$1-[0-9a-f]{16}$" | head -1; }
cp_img=$(img "v$API")
{
	echo "kind: Cluster"
	echo "apiVersion: kind.x-k8s.io/v1alpha4"
	echo "networking: {apiServerAddress: 127.0.0.1, disableDefaultCNI: true}"
	# skewproof's kubeadm patches (clusters/cluster.go): no CoreDNS add-on
	# (the node images hold no CoreDNS image), kube-controller-manager's
	# client rate, and cgroup v1 allowed where the host has it.
	printf 'kubeadmConfigPatches:\n- |\n  kind: InitConfiguration\n  skipPhases:\n  - preflight\n  - addon/coredns\n'
	printf -- '- |\n  kind: ClusterConfiguration\n  controllerManager:\n    extraArgs:\n      kube-api-qps: "100"\n      kube-api-burst: "200"\n'
	if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
		printf -- '- |\n  apiVersion: kubelet.config.k8s.io/v1beta1\n  kind: KubeletConfiguration\n  failCgroupV1: false\n'
	fi
	echo "nodes:"
	echo "- {role: control-plane, image: $cp_img}"
	for k in ${KUBELETS//,/ }; do
		if [ "$k" = "$API" ]; then i=$cp_img; else i=$(img "v$API-kubelet-v$k"); fi
		echo "- {role: worker, image: $i}"
	done
} >"$cfg"
echo "== kind create cluster (same images and configuration) + CNI config + kubectl wait"
export KIND_EXPERIMENTAL_DOCKER_NETWORK=skewproof-m-kind
s=$(date +%s.%N)
"$TMP/kind" create cluster --name m-kind --config "$cfg" --kubeconfig "$TMP/kind.kubeconfig" >/dev/null 2>&1
cp=m-kind-control-plane
k() { docker exec "$cp" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
n=$(( $(echo "$KUBELETS" | tr , '\n' | wc -l) + 1 ))
until [ "$(k get nodes -o jsonpath='{range .items[*]}{.spec.podCIDR}{"\n"}{end}' | grep -c .)" = "$n" ]; do sleep 0.5; done
k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.addresses[0].address}{"\n"}{end}' >"$TMP/nodes"
while read -r name cidr _; do
	docker exec "$name" sh -c "mkdir -p /etc/cni/net.d && printf '%s' '{\"cniVersion\":\"0.4.0\",\"name\":\"plain\",\"plugins\":[{\"type\":\"ptp\",\"ipam\":{\"type\":\"host-local\",\"ranges\":[[{\"subnet\":\"$cidr\"}]],\"routes\":[{\"dst\":\"0.0.0.0/0\"}]}},{\"type\":\"portmap\",\"capabilities\":{\"portMappings\":true}}]}' > /etc/cni/net.d/10-plain.conflist"
	while read -r other ocidr oip; do
		[ "$other" = "$name" ] || docker exec "$name" ip route replace "$ocidr" via "$oip"
	done <"$TMP/nodes"
done <"$TMP/nodes"
k wait --for=condition=Ready nodes --all --timeout=5m >/dev/null
until k wait --for=condition=Ready pods --all -n kube-system --timeout=5m >/dev/null 2>&1; do sleep 0.5; done
e=$(date +%s.%N)
kd=$(echo "$e - $s" | bc)
echo "kind CLI up: ${kd}s"
echo "ratio skewproof/kind: $(echo "scale=2; $sp / $kd" | bc)"
