#!/usr/bin/env bash
# Measures `skewproof simulate` for one pair: the wall time of N runs
# (default 20) of the binary, min / median / max, with the load average at
# the start (the target is for an idle machine).
#
# Usage: hack/measure-simulate.sh [N]   BIN (default bin/skewproof),
#        APISERVER (default 1.37.2), KUBELET (default 1.34.4)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
BIN=${BIN:-bin/skewproof}
: "${APISERVER:=1.37.2}" "${KUBELET:=1.34.4}"
[ -x "$BIN" ] || { echo "no $BIN: run make build, or set BIN" >&2; exit 1; }
load=$(cut -d' ' -f1-3 /proc/loadavg)
"$BIN" simulate --apiserver "$APISERVER" --kubelet "$KUBELET" >/dev/null # warm the page cache
times=()
for _ in $(seq 1 "$n"); do
	s=$(date +%s%N)
	"$BIN" simulate --apiserver "$APISERVER" --kubelet "$KUBELET" >/dev/null
	e=$(date +%s%N)
	times+=($(((e - s) / 1000)))
done
printf '%s\n' "${times[@]}" | sort -n | awk -v n="$n" -v load="$load" -v cmd="$BIN simulate --apiserver $APISERVER --kubelet $KUBELET" '
	{ t[NR] = $1 }
	END { printf "%s, %d runs, load at the start %s: min %.1f ms, median %.1f ms, max %.1f ms\n", cmd, n, load, t[1] / 1000, t[int((n + 1) / 2)] / 1000, t[n] / 1000 }'
