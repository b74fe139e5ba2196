#!/usr/bin/env bash
# Shows flake handling on a real cluster: seccomp/kubelet/localhost runs on a
# worker whose copy of the Localhost profile is tampered with (it allows
# mkdir) during the spec's first attempt, and repaired as soon as Ginkgo
# retries it. The first attempt must fail, the retry pass, and the run
# report the spec `flaky` with the first failure — never a plain pass. The
# report of the run then goes through `skewproof report`, and
# `--rerun-failed` on it selects the spec again.
#
# Usage: bash hack/flaky-check.sh [OUTDIR]   (needs make build; node images
# for 1.37.2 and kubelet 1.34.4 are built when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-_artifacts/flaky-check}
name=flaky-check
node=$name-worker
file=/var/lib/kubelet/seccomp/skewproof-profiles/skewproof-fixtures/deny-mkdir.json
rm -rf "$out" && mkdir -p "$out"

bin/skewproof run --name "$name" --apiserver 1.37.2 --kubelets 1.34.4 --suites seccomp \
	--ids seccomp/kubelet/localhost --junit-dir "$out/run" >"$out/run.log" 2>&1 &
run=$!
trap 'kill $run 2>/dev/null || true; wait $run 2>/dev/null || true' EXIT

# Tamper while the first attempt runs: the agent rewrites the file on its
# next pass, so keep writing it until Ginkgo says it retries.
tampered='{"defaultAction":"SCMP_ACT_ALLOW"}'
until grep -q "running the seccomp suite" "$out/run.log"; do
	kill -0 $run 2>/dev/null || { echo "run ended before the suite started"; tail -20 "$out/run.log"; exit 1; }
	sleep 0.5
done
echo "suite started: tampering with $file on $node"
until grep -q "Retrying" "$out"/run/seccomp-"$name"*.log 2>/dev/null; do
	kill -0 $run 2>/dev/null || break
	docker exec "$node" sh -c "test -f $file && printf '%s' '$tampered' > $file" || true
	sleep 0.5
done
echo "Ginkgo retries the spec: restoring $file"
docker exec -i "$node" sh -c "cat > $file" <profiles/seccomp/deny-mkdir.json
trap - EXIT
rc=0
wait $run || rc=$?
echo "run exit status: $rc"
grep -E "^\[.*\] (flaky|pass|fail) " "$out/run.log" || true
bin/skewproof report "$out/run" --out "$out/report"
jq -r '.cells[] | "\(.id) \(.verdict): \(.reason // "")"' "$out/report/summary.json" 2>/dev/null || true
