#!/usr/bin/env bash
# Runs the same `skewproof run` N times in a row (default 10) and shows that
# every spec gets the same verdict each time (`skewproof report diff` of the
# first run against each other run must list no change, and no id may
# appear or disappear), then records each spec's duration spread. The first
# run has a twin of another name running at the same time (two runs at once
# must not interfere: its verdicts must equal run 1's too).
#
# Usage: bash hack/repeat-runs.sh [OUTDIR]
#   RUNS=10 APISERVER=1.37.2 KUBELETS=1.36.3 SUITES=seccomp,apparmor NAME=repeat
# Needs: make build; Docker. Writes OUTDIR/repeat.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit
out=${1:-_artifacts/repeat-runs}
rm -rf "$out" && mkdir -p "$out"
bin=${SKEWPROOF:-$PWD/bin/skewproof}
runs=${RUNS:-10}
apiserver=${APISERVER:-1.37.2}
kubelets=${KUBELETS:-1.36.3}
suites=${SUITES:-seccomp,apparmor}
name=${NAME:-repeat}
md=$out/repeat.md
changed=0
failed=0

{
	echo "\`skewproof run --name $name --apiserver $apiserver --kubelets $kubelets --suites $suites\`, $runs times in a row;"
	echo "machine: $(nproc) cores, load at the start $(cut -d' ' -f1-3 /proc/loadavg); $(git rev-parse --short HEAD)."
	echo
	echo '| run | exit | took | specs | verdict changes against run 1 |'
	echo '| --- | --- | --- | --- | --- |'
} >"$md"
for i in $(seq 1 "$runs"); do
	t0=$(date +%s)
	rc=0
	twin=
	if [ "$i" = 1 ]; then
		"$bin" run --name "$name-twin" --apiserver "$apiserver" --kubelets "$kubelets" --suites "$suites" \
			--junit-dir "$out/twin" >"$out/twin.log" 2>&1 &
		twin=$!
	fi
	"$bin" run --name "$name" --apiserver "$apiserver" --kubelets "$kubelets" --suites "$suites" \
		--junit-dir "$out/run-$i" >"$out/run-$i.log" 2>&1 || rc=$?
	if [ -n "$twin" ]; then
		trc=0
		wait "$twin" || trc=$?
		tdiff=$("$bin" report diff "$out/run-1" "$out/twin" --format json 2>&1 | jq -r '[(.changes | length), (.idsAppeared | length), (.idsDisappeared | length)] |
			if . == [0,0,0] then "none" else "\(.[0]) changed, \(.[1]) appeared, \(.[2]) disappeared" end' 2>/dev/null || echo "diff failed")
		[ "$tdiff" = none ] || changed=$((changed + 1))
		[ "$trc" = 0 ] || failed=$((failed + 1))
		printf '| 1 (twin %s-twin, at the same time) | %d | — | %s | %s |\n' "$name" "$trc" "$(grep -E '^[0-9]+ specs:' "$out/twin.log" | tail -1)" "$tdiff" >>"$md"
	fi
	took=$(($(date +%s) - t0))
	summary=$(grep -E '^[0-9]+ specs:' "$out/run-$i.log" | tail -1)
	diff="—"
	if [ "$i" -gt 1 ]; then
		"$bin" report diff "$out/run-1" "$out/run-$i" --format json >"$out/diff-$i.json" 2>&1
		diff=$(jq -r '[(.changes | length), (.idsAppeared | length), (.idsDisappeared | length)] |
			if . == [0,0,0] then "none" else "\(.[0]) changed, \(.[1]) appeared, \(.[2]) disappeared" end' "$out/diff-$i.json" 2>/dev/null || echo "diff failed")
		[ "$diff" = none ] || changed=$((changed + 1))
	fi
	[ "$rc" = 0 ] || failed=$((failed + 1))
	printf '| %d | %d | %d s | %s | %s |\n' "$i" "$rc" "$took" "$summary" "$diff" >>"$md"
	echo "$(date +%T) run $i: exit $rc, ${took}s, $summary, changes: $diff" >&2
done

# Per spec and node: the verdicts seen over the runs and the durations.
{
	echo
	echo '| id | node | verdicts over the runs | min | median | max | spread |'
	echo '| --- | --- | --- | --- | --- | --- | --- |'
	# shellcheck disable=SC2016 # awk programs
	find "$out" -path "$out/run-*/junit-*.xml" -print0 | xargs -0 awk '
		function val(s) { sub(/.*value="/, "", s); sub(/".*/, "", s); return s }
		/<testcase / { t = $0; sub(/.*time="/, "", t); sub(/".*/, "", t); id = ""; v = ""; n = "cluster" }
		/<property name="id"/ { id = val($0) }
		/<property name="verdict"/ { v = val($0) }
		/<property name="node"/ { n = val($0) }
		/<\/testcase>/ { print id, n, v, t }' |
		sort -k1,1 -k2,2 -k4,4n | awk '
		{ k = $1 " " $2; t[k] = t[k] " " $4; c[k]++; if (index(" " vs[k] " ", " " $3 " ") == 0) vs[k] = vs[k] (vs[k] == "" ? "" : " ") $3 }
		END {
			for (k in t) {
				split(substr(t[k], 2), a, " "); split(k, kk, " ")
				printf "| %s | %s | %s (%d) | %.1f s | %.1f s | %.1f s | %.1f s |\n", kk[1], kk[2], vs[k], c[k], a[1], a[int((c[k] + 1) / 2)], a[c[k]], a[c[k]] - a[1]
			}
		}' | sort
} >>"$md"
{
	echo
	echo "runs: $runs; runs that failed: $failed; runs whose verdicts differ from run 1: $changed"
} >>"$md"
cat "$md"
[ "$failed" = 0 ] && [ "$changed" = 0 ]
