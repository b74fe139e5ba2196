#!/usr/bin/env bash
# Measures a warm `skewproof cluster up` (1 control plane + 2 workers, images
# already built) against the plain kind CLI on the same node images: kind
# create with the same configuration, the same per-node CNI configuration
# written by a shell loop, and `kubectl wait` for nodes and kube-system pods.
#
# kind's side gets the kubeadm patches the node images and this host need
# (no CoreDNS add-on: the images hold no CoreDNS; cgroup v1 allowed) and
# the controller manager's client rate, as skewproof's clusters have. It
# does not get skewproof's start-up tuning (clusters/probes.go: the control
# plane's startup probes every second; the controller manager's lease
# retried every 500 ms), which is part of what is measured; with
# KIND_TUNED=yes it gets that too (the patches from skewproof's cache
# directory), which shows what the rest of skewproof costs against kind.
#
# RUNS pairs (default 3); the side that goes first alternates (odd runs
# skewproof first, even runs kind first). Each side prints its total, the
# part spent in kind's create, and "probe lag": the longest time from a
# kube-system pod's start to its Ready condition. kubeadm gives the control
# plane's static pods a startup probe with initialDelaySeconds 10 and
# periodSeconds 10, and a freshly started kubelet sleeps a random part of
# the period before a probe's first tick, so that lag varies by up to 10 s
# from one cluster to the next on either side; the median ratio is printed
# last.
# Usage: [RUNS=N] [KIND_TUNED=yes] hack/measure-up.sh [APISERVER] [KUBELET,KUBELET]   (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
API=${1:-1.37.2}
KUBELETS=${2:-1.34.4,1.37.2}
RUNS=${RUNS:-3}
KIND_TUNED=${KIND_TUNED:-no}
BIN=bin/skewproof
TMP=$(mktemp -d)
export KIND_EXPERIMENTAL_DOCKER_NETWORK=skewproof-m-kind
cleanup() {
	"$BIN" cluster down --name m-skewproof >/dev/null 2>&1 || true
	if [ -x "$TMP/kind" ]; then
		"$TMP/kind" delete cluster --name m-kind >/dev/null 2>&1 || true
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

now() { date +%s.%N; }
# probe_lag CONTROL_PLANE_CONTAINER: the longest start-to-Ready of the
# kube-system pods, in seconds.
probe_lag() {
	docker exec "$1" kubectl --kubeconfig /etc/kubernetes/admin.conf get pods -n kube-system \
		-o jsonpath='{range .items[*]}{.status.startTime} {.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\n"}{end}' |
		while read -r st rd; do echo $(($(date -d "$rd" +%s) - $(date -d "$st" +%s))); done | sort -n | tail -1
}

up_skewproof() {
	local s e
	s=$(now)
	"$BIN" cluster up --name m-skewproof --apiserver "$API" --kubelets "$KUBELETS" --kubeconfig "$TMP/sp.kubeconfig" 2>"$TMP/sp.log" >/dev/null
	e=$(now)
	sp=$(echo "$e - $s" | bc)
	sp_create=$(sed -n 's/.*kind create done in \([0-9.]*\)s.*/\1/p' "$TMP/sp.log")
	sp_lag=$(probe_lag m-skewproof-control-plane)
	"$BIN" cluster down --name m-skewproof --kubeconfig "$TMP/sp.kubeconfig" >/dev/null 2>&1
}

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
	if [ "$KIND_TUNED" = yes ]; then
		printf '      leader-elect-retry-period: "500ms"\n'
		printf -- '- |\n  kind: InitConfiguration\n  patches:\n    directory: /etc/skewproof/kubeadm-patches\n'
	fi
	if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
		printf -- '- |\n  apiVersion: kubelet.config.k8s.io/v1beta1\n  kind: KubeletConfiguration\n  failCgroupV1: false\n'
	fi
	echo "nodes:"
	if [ "$KIND_TUNED" = yes ]; then
		patches=${SKEWPROOF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skewproof}/kubeadm-patches
		[ -d "$patches" ] || { echo "measure-up: no $patches (run skewproof cluster up once)" >&2; exit 1; }
		echo "- {role: control-plane, image: $cp_img, extraMounts: [{hostPath: $patches, containerPath: /etc/skewproof/kubeadm-patches, readOnly: true}]}"
	else
		echo "- {role: control-plane, image: $cp_img}"
	fi
	for k in ${KUBELETS//,/ }; do
		if [ "$k" = "$API" ]; then i=$cp_img; else i=$(img "v$API-kubelet-v$k"); fi
		echo "- {role: worker, image: $i}"
	done
} >"$cfg"
n=$(( $(echo "$KUBELETS" | tr , '\n' | wc -l) + 1 ))

up_kind() {
	local s c e cp=m-kind-control-plane
	k() { docker exec "$cp" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
	s=$(now)
	"$TMP/kind" create cluster --name m-kind --config "$cfg" --kubeconfig "$TMP/kind.kubeconfig" >/dev/null 2>&1
	c=$(now)
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
	e=$(now)
	kd=$(echo "$e - $s" | bc)
	kd_create=$(echo "$c - $s" | bc)
	kd_lag=$(probe_lag "$cp")
	"$TMP/kind" delete cluster --name m-kind >/dev/null 2>&1
}

echo "== $RUNS runs: skewproof cluster up --apiserver $API --kubelets $KUBELETS against kind create (same images; start-up tuning on kind's side: $KIND_TUNED) + CNI config + kubectl wait"
ratios=()
for i in $(seq 1 "$RUNS"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	if [ $((i % 2)) = 1 ]; then first=skewproof; up_skewproof; up_kind; else first=kind; up_kind; up_skewproof; fi
	r=$(echo "scale=2; $sp / $kd" | bc)
	ratios+=("$r")
	printf 'run %d (%s first, load %s): skewproof %.1fs (kind create %.1fs, probe lag %ss)  kind CLI %.1fs (kind create %.1fs, probe lag %ss)  ratio %s\n' \
		"$i" "$first" "$load" "$sp" "$sp_create" "$sp_lag" "$kd" "$kd_create" "$kd_lag" "$r"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
echo "ratio skewproof/kind: median $median of $RUNS runs (${ratios[*]})"
