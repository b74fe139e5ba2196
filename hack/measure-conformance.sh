#!/usr/bin/env bash
# Measures a warm `make conformance`: `skewproof run` of the default 5-node
# cluster (control plane APISERVER, one worker per kubelet of KUBELETS; node
# images already built) with the seccomp, AppArmor and profiles suites, end
# to end (cluster up, profiles, suites, teardown). Each run prints its wall
# time, the time of every suite and of cluster up and teardown, the verdict
# counts, and the host's load average (1-minute, sampled every 5 s: at the
# start, the highest, the mean) — the machine may be shared, so the load
# belongs with every figure — and the CPU-seconds the machine was busy
# against what its cores had, with each kind node's share (sampled every
# 3 s from the node containers' cgroups).
#
# Usage: hack/measure-conformance.sh [RUNS]   (as root)
#   BIN        skewproof binary (default bin/skewproof; skewproof-core and
#              the suite binary are found beside it: copy bin/ as a whole)
#   NAME       cluster name (default measure)
#   OUT        results directory (default _artifacts/measure); run i writes
#              OUT/run-i/ (JUnit, logs, run.json, progress.log, load.log,
#              cpu.log)
#   APISERVER, KUBELETS, SUITES   as for make conformance
#   RUN_FLAGS  more flags for skewproof run (split into words), e.g.
#              "--node-image REF --node-image 1.34.4=REF" to use given images
#
# Compare the verdicts of two runs with
#   bin/skewproof report diff OUT/run-1 OUT/run-2 --format json
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1}
BIN=${BIN:-bin/skewproof}
NAME=${NAME:-measure}
OUT=${OUT:-_artifacts/measure}
: "${APISERVER:=1.37.2}" "${KUBELETS:=1.34.4,1.35.4,1.36.3,1.37.2}" "${SUITES:=seccomp,apparmor,profiles}"
[ -x "$BIN" ] || { echo "no $BIN: run make build, or set BIN" >&2; exit 1; }
sampler=
cleanup() {
	# shellcheck disable=SC2086
	if [ -n "$sampler" ]; then kill $sampler 2>/dev/null || true; fi
	"$BIN" cluster down --name "$NAME" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# cpu_sampler DIR writes DIR/cpu.log every 3 s: the machine's busy CPU time
# ("machine JIFFIES", from /proc/stat) and each of the cluster's node
# containers' CPU time ("node NAME NANOSECONDS", the container's cgroup v1
# cpuacct.usage, which includes every process that ran in it, pods too),
# and each AppArmor node's (User-Mode Linux: every process of its kernel's
# session, from /proc; in the same unit).
cpu_sampler() {
	declare -A names=()
	local hz
	hz=$(getconf CLK_TCK)
	while :; do
		echo "machine $(awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat)"
		for d in /sys/fs/cgroup/cpuacct/docker/*/; do
			id=$(basename "$d")
			if [ -z "${names[$id]:-}" ]; then
				names[$id]=$(docker inspect --format '{{index .Config.Labels "io.x-k8s.kind.cluster"}}/{{.Name}}' "$id" 2>/dev/null || echo "-/gone")
			fi
			case ${names[$id]} in "$NAME/"*) echo "node ${names[$id]#*//} $(cat "$d/cpuacct.usage" 2>/dev/null || echo 0)" ;; esac
		done
		for f in "${SKEWPROOF_CACHE_DIR:-$HOME/.cache/skewproof}"/uml/nodes/"$NAME"-uml-worker*/node.json; do
			[ -e "$f" ] || continue
			pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$f" 2>/dev/null || true)
			[ -n "$pid" ] || continue
			# fields after "pid (comm) ": 4 session, 12-15 utime stime cutime cstime
			# (processes come and go: a vanished file is no error here)
			ticks=$(awk -v s="$pid" '{sub(/^.*\) /, ""); split($0, f, " "); if (f[4] == s) t += f[12] + f[13] + f[14] + f[15]} END {print t + 0}' /proc/[0-9]*/stat 2>/dev/null || true)
			echo "node $(basename "$(dirname "$f")") $((${ticks:-0} * 1000000000 / hz))"
		done
		sleep 3
	done >"$1/cpu.log"
}

for i in $(seq 1 "$RUNS"); do
	dir=$OUT/run-$i
	rm -rf "$dir"
	mkdir -p "$dir"
	(while :; do echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg)"; sleep 5; done) >"$dir/load.log" &
	sampler=$!
	cpu_sampler "$dir" &
	sampler="$sampler $!"
	s=$(date +%s.%N)
	rc=0
	# shellcheck disable=SC2086
	"$BIN" run --name "$NAME" --apiserver "$APISERVER" --kubelets "$KUBELETS" --suites "$SUITES" \
		--junit-dir "$dir" ${RUN_FLAGS:-} >"$dir/stdout.log" 2>"$dir/progress.log" || rc=$?
	e=$(date +%s.%N)
	# shellcheck disable=SC2086
	kill $sampler 2>/dev/null || true
	sampler=
	wall=$(echo "$e - $s" | bc)
	echo "== run $i: exit $rc, ${wall}s end to end"
	grep -E "done in|finished in|failed after" "$dir/progress.log" | sed "s/^/   /" || true
	grep -E "^[0-9]+ specs: " "$dir/stdout.log" | sed "s/^/   /" || true
	awk '{n++; s+=$2; if ($2>m) m=$2; if (n==1) f=$2} END {if (n) printf "   load average (1 min): start %.2f, highest %.2f, mean %.2f over %d samples\n", f, m, s/n, n}' "$dir/load.log"
	# CPU-seconds: the machine's busy time over the run against what its
	# cores had, and each node container's (its last sample).
	awk -v wall="$wall" -v cores="$(nproc)" -v hz="$(getconf CLK_TCK)" '
		$1 == "machine" { if (first == "") first = $2; last = $2 }
		$1 == "node" && $3 > 0 { cpu[$2] = $3 }
		END {
			printf "   CPU-seconds: machine busy %.0f of %.0f (%d cores)", (last - first) / hz, wall * cores, cores
			for (n in cpu) { t += cpu[n] / 1e9; out = out sprintf(", %s %.0f", n, cpu[n] / 1e9) }
			printf "; nodes %.0f in all%s\n", t, out
		}' "$dir/cpu.log"
done
