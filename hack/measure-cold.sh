#!/usr/bin/env bash
# Measures a cold `make conformance`: what a fresh machine of this kind
# (Go, the Docker client, the host packages of `make host`) goes through
# from nothing — module downloads, `make build`, the debootstrap base,
# every Kubernetes binary the default cluster needs, the node images, and
# the run itself. It prints each step's timing from the run's progress
# lines, the wall time, and the load average (sampled every 5 s).
#
# It makes this machine cold first, which is destructive: it removes every
# skewproof image from Docker and the skewproof cache directory (what the
# run needs is rebuilt by it; other versions are rebuilt when next used).
# It refuses unless WIPE=yes. The Go build and module caches of the run are
# new, empty directories under OUT (a fresh machine's), removed afterwards
# unless KEEP_GO_CACHES=1; the machine's own Go caches are not touched.
#
# Usage: WIPE=yes hack/measure-cold.sh   (as root, from a clean checkout)
#   OUT    work directory (default /tmp/skewproof-cold): make.log with a
#          timestamp per line, load.log, the run's Go caches
#   MAKE_ARGS  more arguments for make conformance (e.g. APISERVER=…)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${WIPE:-}" != yes ]; then
	echo "measure-cold.sh removes every skewproof image, the skewproof cache and the Go build and module caches; run it as WIPE=yes $0" >&2
	exit 2
fi
OUT=${OUT:-/tmp/skewproof-cold}
rm -rf "$OUT"
mkdir -p "$OUT"

echo "== making the machine cold"
# By reference, node images before the base image they are built on.
docker images --format '{{.Repository}}:{{.Tag}}' | { grep '^skewproof-' || true; } | sort -r | xargs -r docker rmi >/dev/null
docker image prune -f >/dev/null
cache=${SKEWPROOF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skewproof}
rm -rf "$cache" bin
export GOCACHE=$OUT/gocache GOMODCACHE=$OUT/gomodcache
mkdir -p "$GOCACHE" "$GOMODCACHE"
echo "   free disk: $(df -h --output=avail / | tail -1 | tr -d ' ')"

sampler=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
	if [ "${KEEP_GO_CACHES:-}" != 1 ]; then
		go clean -modcache 2>/dev/null || true
		rm -rf "$GOCACHE" "$GOMODCACHE"
	fi
}
trap cleanup EXIT
(while :; do echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg)"; sleep 5; done) >"$OUT/load.log" &
sampler=$!
# Busy CPU time of the whole machine (user, nice, system, irq, softirq; clock ticks).
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
busy0=$(busy)
start=$(date +%s.%N)
start_us=${EPOCHREALTIME/./}
rc=0
# Each line with the seconds since the start, stamped as it arrives.
# shellcheck disable=SC2086
make conformance ${MAKE_ARGS:-} 2>&1 |
	while IFS= read -r line; do
		t=$((${EPOCHREALTIME/./} - start_us))
		printf '[%5d.%01ds] %s\n' $((t / 1000000)) $((t / 100000 % 10)) "$line"
	done >"$OUT/make.log" || rc=$?
end=$(date +%s.%N)
busy1=$(busy)
kill "$sampler" 2>/dev/null || true
sampler=

echo "== cold make conformance: exit $rc, $(echo "$end - $start" | bc | xargs printf '%.0f') s end to end"
echo "   steps (each 'done in' line of the build and the run, with when it ended):"
grep -E "done in|finished in|failed after|CGO_ENABLED=0 go (build|test)" "$OUT/make.log" | sed 's/^/   /' || true
grep -E "^\[ *[0-9.]+s\] [0-9]+ specs: " "$OUT/make.log" | sed 's/^/   /' || true
echo "   machine busy: $(( (busy1 - busy0) / $(getconf CLK_TCK) )) CPU-s of $(echo "($end - $start) * $(nproc)" | bc | xargs printf '%.0f') ($(nproc) cores)"
awk '{n++; s+=$2; if ($2>m) m=$2; if (n==1) f=$2} END {if (n) printf "   load average (1 min): start %.2f, highest %.2f, mean %.2f over %d samples\n", f, m, s/n, n}' "$OUT/load.log"
exit "$rc"
