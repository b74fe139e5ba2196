#!/usr/bin/env bash
# What AppArmor nodes (User-Mode Linux workers, --apparmor-node) cost a run:
#  1. readiness: `skewproof cluster up` of a control plane at API with kind
#     workers at KUBELETS and 0, 1, then 2 AppArmor nodes (--apparmor-node
#     with the first 0, 1, 2 kubelets of KUBELETS), from the command's start
#     to every node Ready and every kube-system pod ready — what each added
#     node adds;
#  2. CPU-seconds of each AppArmor node of the last cluster (all of its
#     host processes: the kernel runs in a session of its own): from its
#     boot to Ready (boot, join, kube-proxy), then at rest for REST seconds
#     (kubelet, containerd, kube-proxy idle), then per pod: PODS pause pods
#     on each node, created to Ready and deleted, divided by PODS.
# Node images, disks and the kernel are made first when missing (not timed:
# a cluster up with nothing measured). Prints one line per figure, for
# docs/measurements.md. Clusters are named uml-c*; nothing is left behind
# (cluster down on exit, interrupt included).
# Usage: [REST=60] [PODS=3] [UPS="0 1 2"] [WARM=yes|no] hack/measure-uml-cost.sh [API] [KUBELETS]   (as root)
# (UPS: the numbers of AppArmor nodes of the readiness runs, the last one
# measured further; WARM=no: everything is cached already)
set -euo pipefail
cd "$(dirname "$0")/.."
API=${1:-1.37.2}
KUBELETS=${2:-1.34.4,1.35.4,1.36.3,1.37.2}
REST=${REST:-60}
UPS=${UPS:-0 1 2}
PODS=${PODS:-3}
BIN=bin/skewproof
NAME=uml-c
# shellcheck source=hack/lib.sh
. hack/lib.sh
with_cluster_cleanup "$BIN" "$NAME"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
say() { printf 'measure-uml-cost: %s\n' "$*"; }
make -s build
say "host: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), AMX $(grep -qw amx_tile /proc/cpuinfo && echo yes || echo no), load average $(cut -d' ' -f1-3 /proc/loadavg)"
IFS=, read -r -a kl <<<"$KUBELETS"
# warm-up: images, disks and the kernel (WARM=no skips it)
[[ ${WARM:-yes} == no ]] || "$BIN" cluster up --name "$NAME" --apiserver "$API" --kubelets "$KUBELETS" --apparmor-node "${kl[0]},${kl[1]:-${kl[0]}}" >"$TMP/warm.log" 2>&1 || { tail -20 "$TMP/warm.log" >&2; exit 1; }
[[ ${WARM:-yes} == no ]] || "$BIN" cluster down --name "$NAME" >/dev/null
for n in $UPS; do
	aa=off
	[[ $n -ge 1 ]] && aa=${kl[0]}
	[[ $n -ge 2 ]] && aa=$aa,${kl[1]}
	t=$(now)
	"$BIN" cluster up --name "$NAME" --apiserver "$API" --kubelets "$KUBELETS" --apparmor-node "$aa" >"$TMP/up$n.log" 2>&1 || { tail -20 "$TMP/up$n.log" >&2; exit 1; }
	say "cluster up, kind workers $KUBELETS, $n AppArmor nodes ($aa): $(since "$t") s to every node Ready ($(grep -o 'kind create done in [0-9.]*s' "$TMP/up$n.log"))"
	if [[ $n != "${UPS##* }" ]]; then "$BIN" cluster down --name "$NAME" >/dev/null; fi
done
export KUBECONFIG=$HOME/.kube/skewproof-$NAME.yaml
declare -A boot rest
while read -r node pid; do
	boot[$node]=$(uml_session_cpu "$pid")
	say "$node: $(kubectl get node "$node" -o jsonpath='{.status.nodeInfo.kubeletVersion}'), boot to Ready ${boot[$node]} CPU-s"
done < <(uml_node_pids "$NAME")
declare -A r0
while read -r node pid; do r0[$node]=$(uml_session_cpu "$pid"); done < <(uml_node_pids "$NAME")
la=$(cut -d' ' -f1 /proc/loadavg)
sleep "$REST"
while read -r node pid; do
	say "$node: at rest $(awk -v a="${r0[$node]}" -v b="$(uml_session_cpu "$pid")" -v s="$REST" 'BEGIN{printf "%.3f CPU-s per s (%.1f over %d s)", (b-a)/s, b-a, s}') (load average before: $la)"
done < <(uml_node_pids "$NAME")
pause=
while read -r node pid; do
	[[ -n $pause ]] || pause=$(kubectl get node "$node" -o jsonpath='{range .status.images[*]}{range .names[*]}{@}{"\n"}{end}{end}' | awk '/\/pause:/ {print; exit}')
	c0=$(uml_session_cpu "$pid")
	t=$(now)
	for i in $(seq 1 "$PODS"); do
		kubectl apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: cost-$node-$i, namespace: default}
spec:
  nodeSelector: {kubernetes.io/hostname: $node}
  tolerations: [{operator: Exists}]
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: "$pause", imagePullPolicy: Never}]
POD
		kubectl wait --for=condition=Ready "pod/cost-$node-$i" --timeout=10m >/dev/null
		kubectl delete pod "cost-$node-$i" --wait=true >/dev/null
	done
	wall=$(since "$t")
	say "$node: per pod (created to Ready, deleted) $(awk -v a="$c0" -v b="$(uml_session_cpu "$pid")" -v n="$PODS" -v w="$wall" 'BEGIN{printf "%.1f CPU-s, %.1f s wall (%d pods)", (b-a)/n, w/n, n}')"
done < <(uml_node_pids "$NAME")
