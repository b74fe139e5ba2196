#!/usr/bin/env bash
# Measures the AppArmor node (--apparmor-node, a worker on User-Mode Linux):
#  1. the UML kernel (built now unless cached: the build's time);
#  2. boot to Ready: `skewproof cluster up` with the node, from the kernel's
#     start ("booting AppArmor node" progress line) to the Node's Ready
#     condition;
#  3. a pod start on the node: PODS pods (default 3), one after the other,
#     each from `kubectl create` to Ready (the pause image, preloaded);
#  4. with SUITE=yes (default), the AppArmor suite with the node:
#     `skewproof run --apiserver API --kubelets OLD,API --apparmor-node API
#     --suites apparmor`, its wall time and verdicts.
# Node images are built first when missing (not timed). Prints one line per
# measurement, for docs/measurements.md. Clusters are named uml-m*; nothing
# is left behind (cluster down on exit, interrupt included).
# Usage: [PODS=N] [SUITE=yes|no] hack/measure-uml.sh [APISERVER] [OLDER_KUBELET]   (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
API=${1:-1.37.2}
OLD=${2:-1.34.4}
PODS=${PODS:-3}
SUITE=${SUITE:-yes}
BIN=bin/skewproof
NAME="uml-m"
TMP=$(mktemp -d)
cleanup() {
	"$BIN" cluster down --name "$NAME" >/dev/null 2>&1 || true
	"$BIN" cluster down --name "$NAME-suite" >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
say() { printf 'measure-uml: %s\n' "$*"; }

make -s build
say "host: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), AMX $(grep -qw amx_tile /proc/cpuinfo && echo yes || echo no), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN" images build --kubernetes "$API" >/dev/null
"$BIN" images build --kubernetes "$API" --kubelet "$OLD" >/dev/null

t=$(now)
kernel=$("$BIN" images uml-kernel 2>"$TMP/kernel.log") || { cat "$TMP/kernel.log" >&2; exit 1; }
if grep -q 'built from' "$TMP/kernel.log"; then
	say "kernel built: $(grep -o 'built from.*' "$TMP/kernel.log") ($(since "$t") s in all)"
else
	say "kernel: cached ($kernel)"
fi
say "kernel features: $("$kernel" --help 2>&1 | grep -o -e 'seccomp=<on/auto/off>' -e 'ncpus=<[^>]*>' | tr '\n' ' ')"

# 2. boot to Ready
t=$(now)
"$BIN" cluster up --name "$NAME" --apiserver "$API" --kubelets "$API" --apparmor-node "$API" 2>"$TMP/up.log" >/dev/null ||
	{ cat "$TMP/up.log" >&2; exit 1; }
up=$(since "$t")
boot_rel=$(sed -n 's/^\[ *\([0-9.]*\)s\] booting AppArmor node.*/\1/p' "$TMP/up.log" | head -1)
node=$NAME-uml-worker
export KUBECONFIG=$HOME/.kube/skewproof-$NAME.yaml
ready=$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastTransitionTime}')
boot_at=$(awk -v a="$t" -v b="$boot_rel" 'BEGIN{printf "%.1f", a+b}')
cpus=$(sed -n 's/.*User-Mode Linux ([^,]*, \([0-9]*\) CPUs).*/\1/p' "$TMP/up.log" | head -1)
say "cluster up with the AppArmor node: $up s; boot to Ready: $(awk -v r="$(date -d "$ready" +%s)" -v b="$boot_at" 'BEGIN{printf "%.0f", r-b}') s (${cpus:-?} virtual CPUs)"

# 3. pods on the node
# the sandbox image, present on every node (never pulled)
pause=$(kubectl get node "$node" -o jsonpath='{range .status.images[*]}{range .names[*]}{@}{"\n"}{end}{end}' | awk '/\/pause:/ {print; exit}')
[ -n "$pause" ] || { echo "measure-uml: no pause image on $node" >&2; exit 1; }
for i in $(seq 1 "$PODS"); do
	t=$(now)
	kubectl apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: measure-$i, namespace: default}
spec:
  nodeSelector: {kubernetes.io/hostname: $node}
  tolerations: [{operator: Exists}]
  containers: [{name: c, image: "$pause", imagePullPolicy: Never}]
POD
	kubectl wait --for=condition=Ready "pod/measure-$i" --timeout=10m >/dev/null
	say "pod $i on the AppArmor node: created to Ready in $(since "$t") s"
done
"$BIN" cluster down --name "$NAME" >/dev/null 2>&1

# 4. the AppArmor suite with the node
if [ "$SUITE" = yes ]; then
	t=$(now)
	rc=0
	"$BIN" run --name "$NAME-suite" --apiserver "$API" --kubelets "$OLD,$API" --apparmor-node "$API" --suites apparmor \
		--junit-dir "$TMP/run" >"$TMP/run.log" 2>&1 || rc=$?
	say "AppArmor suite with the node (kubelets $OLD,$API + UML $API): $(since "$t") s, exit $rc"
	grep -h -o '[0-9]* specs.*' "$TMP/run.log" | tail -1 | sed 's/^/measure-uml:   /' || true
	# the verdicts on the AppArmor node, and why each skip there skipped
	uml=$NAME-suite-uml-worker
	awk -v n="$uml" 'sub(/^\[ *[0-9.]+s\] +/, "") && $1 ~ /^(pass|deviation|fail|skip)$/ && $3 == n {c[$1]++} END {printf "measure-uml:   on %s:", n; for (v in c) printf " %s %d", v, c[v]; print ""}' "$TMP/run.log"
	awk -v n="$uml" 'sub(/^\[ *[0-9.]+s\] +/, "") && $1 == "skip" && $3 == n {r = ""; for (i = 5; i <= NF; i++) r = r " " $i; print "measure-uml:     skip " $2 ":" r}' "$TMP/run.log"
	[ "$rc" = 0 ] || tail -30 "$TMP/run.log" >&2
fi
