#!/usr/bin/env bash
# What a pod costs an AppArmor node (a User-Mode Linux worker), by the
# node's OCI runtime and by what its container runs: a cluster of a control
# plane at API, one kind worker and one AppArmor node per entry of NODES
# (--apparmor-node NODES, e.g. 1.37.2,1.37.2+crun); on each AppArmor node in
# turn, PODS busybox pods created at once to Ready, REST seconds at rest,
# one exec into each, then deleted; for each container command (CMDS:
# "loop", a sleep started every second, and "wait", one sleep the shell
# waits on), ROUNDS times. Prints the host CPU-seconds of the node's kernel
# session for each phase, then what deploying the profile agent costs each
# node. Nothing is left behind (cluster down on exit, interrupt included).
# Usage: [PODS=4] [REST=20] [ROUNDS=2] [CMDS="loop wait"] hack/measure-uml-pod.sh [API] [NODES]   (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
API=${1:-1.37.2}
NODES=${2:-1.37.2,1.37.2+crun}
PODS=${PODS:-4}
REST=${REST:-20}
ROUNDS=${ROUNDS:-2}
CMDS=${CMDS:-loop wait}
BIN=${BIN:-bin/skewproof}
NAME=uml-p
# shellcheck source=hack/lib.sh
. hack/lib.sh
with_cluster_cleanup "$BIN" "$NAME"
say() { printf 'measure-uml-pod: %s\n' "$*"; }
delta() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
pod() { # NODE I CMD
	local cmd
	case $3 in
	loop) cmd="trap 'exit 0' TERM; while true; do sleep 1; done" ;;
	wait) cmd="trap 'exit 0' TERM; sleep 2147483647 & wait" ;;
	*) echo "unknown command $3 (loop or wait)" >&2; exit 2 ;;
	esac
	cat <<POD
apiVersion: v1
kind: Pod
metadata: {name: p-$1-$2, namespace: default}
spec:
  nodeSelector: {kubernetes.io/hostname: $1}
  tolerations: [{operator: Exists}]
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: "skewproof.local/busybox:1", imagePullPolicy: Never, command: [sh, -c, "$cmd"]}]
POD
}
make -s build
say "host: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN" cluster up --name "$NAME" --apiserver "$API" --kubelets "${NODES%%,*}" --apparmor-node "$NODES" >"$TMP/up.log" 2>&1 || { tail -20 "$TMP/up.log" >&2; exit 1; }
export KUBECONFIG=$HOME/.kube/skewproof-$NAME.yaml
kubectl get nodes -L skewproof.io/oci-runtime,skewproof.io/oci-runtime-version
sleep 20 # the nodes settle after joining
for round in $(seq 1 "$ROUNDS"); do
	for c in $CMDS; do
		while read -r node pid; do
			names=()
			for i in $(seq 1 "$PODS"); do names+=("p-$node-$i"); done
			t0=$(date +%s.%N) c0=$(uml_session_cpu "$pid")
			for i in $(seq 1 "$PODS"); do pod "$node" "$i" "$c" | kubectl apply -f - >/dev/null; done
			kubectl wait --for=condition=Ready "${names[@]/#/pod/}" --timeout=5m >/dev/null
			c1=$(uml_session_cpu "$pid")
			sleep "$REST"
			c2=$(uml_session_cpu "$pid")
			for n in "${names[@]}"; do kubectl exec "$n" -- sh -c 'echo x > /tmp/x; cat /tmp/x' >/dev/null; done
			c3=$(uml_session_cpu "$pid")
			kubectl delete pod "${names[@]}" --wait=true >/dev/null
			c4=$(uml_session_cpu "$pid")
			say "round $round, $c, $node ($(kubectl get node "$node" -o jsonpath='{.metadata.labels.skewproof\.io/oci-runtime}')): create $PODS $(delta "$c0" "$c1") CPU-s; at rest ${REST} s $(delta "$c1" "$c2"); $PODS execs $(delta "$c2" "$c3"); delete $(delta "$c3" "$c4"); in all $(delta "$c0" "$c4") CPU-s, $(delta "$t0" "$(date +%s.%N)") s"
		done < <(uml_node_pids "$NAME")
	done
done
declare -A a0
while read -r node pid; do a0[$node]=$(uml_session_cpu "$pid"); done < <(uml_node_pids "$NAME")
t0=$(date +%s.%N)
"$BIN" profiles deploy --kubeconfig "$KUBECONFIG" >/dev/null 2>&1
say "agent deployed (image loaded into every node, Ready on every node) in $(delta "$t0" "$(date +%s.%N)") s"
while read -r node pid; do say "agent on $node: $(delta "${a0[$node]}" "$(uml_session_cpu "$pid")") CPU-s"; done < <(uml_node_pids "$NAME")
