#!/usr/bin/env bash
# The faults of docs/suites/fault-injection.md ("Green means judged"), on a
# kept cluster of control plane 1.37.2 and one worker with kubelet 1.34.4:
#   flaky     the worker's runtime drops seccomp from each pod's first attempt
#             (hack/fault-flaky-runtime.sh): the run must exit 1 and the JUnit
#             carry a <failure type="Flaky"> per affected id on that node;
#   stopped   the worker's kubelet is stopped before the run: the run names the
#             node and its Ready condition at once, skips its kubelet rules with
#             that reason and exits 1;
#   cordoned  the worker is cordoned: its kubelet rules are judged, the run says so;
#   timeout   --timeout 25s cuts the suite processes short: the spec Ginkgo
#             interrupts and every spec never run are <failure>s, the run exits
#             1 and 'bundle verify' of its results exits 1;
#   killed    a suite process is killed (kill -9) after its first result line:
#             every spec it never reported is a <failure> naming the signal and
#             the log's last lines, the run exits 1, 'bundle verify' exits 1.
# BIN=dir of another build (e.g. an older one) runs that build instead of bin/.
#
# Usage: bash hack/fault-checks.sh flaky|stopped|cordoned [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fault=${1:?flaky, stopped, cordoned, timeout or killed}
out=${2:-_artifacts/fault-$fault}
bin=${BIN:-bin}
name=${CLUSTER:-fault}
node=$name-worker
kubeconfig=$HOME/.kube/skewproof-$name.yaml
rm -rf "$out" && mkdir -p "$out"
if ! bin/skewproof cluster list 2>/dev/null | grep -q "^$name "; then
	bin/skewproof cluster up --name "$name" --apiserver 1.37.2 --kubelets 1.34.4 --kubeconfig "$kubeconfig"
fi
stamp() { date +%s.%N; }
run() {
	local rc=0 start
	start=$(stamp)
	"$bin/skewproof" run --kubeconfig "$kubeconfig" --name "$name" --junit-dir "$out/run" "$@" >"$out/run.log" 2>&1 || rc=$?
	echo "run exit status: $rc after $(echo "$(stamp) - $start" | bc | cut -d. -f1) s"
}
case "$fault" in
flaky)
	bash hack/fault-flaky-runtime.sh install "$node"
	trap 'bash hack/fault-flaky-runtime.sh remove "$node"' EXIT
	run --suites seccomp --label-filter kubelet
	docker exec "$node" cat /run/skewproof-fault.log | sed 's/^/node: /'
	grep -E "^\[.*\] +(flaky|fail|pass|deviation|skip) " "$out/run.log" | grep "$node" || true
	grep -o '<failure message="flaky[^"]*" type="Flaky">' "$out"/run/junit-*.xml | sort | uniq -c || true
	;;
stopped)
	docker exec "$node" systemctl stop kubelet
	trap 'docker exec "$node" systemctl start kubelet' EXIT
	echo "kubelet stopped on $node; waiting until the node is not Ready"
	until kubectl --kubeconfig "$kubeconfig" get node "$node" --no-headers 2>/dev/null | grep -q NotReady; do sleep 2; done
	run --suites seccomp,apparmor,profiles
	grep -m3 -E "cannot test|not tested|could not be tested" "$out/run.log" || true
	grep -E "specs: " "$out/run.log" || true
	tail -1 "$out/run.log"
	echo "again with --allowed-not-ready-nodes 1:"
	out=$out/allowed && mkdir -p "$out"
	run --suites seccomp,apparmor,profiles --allowed-not-ready-nodes 1
	grep -E "specs: |not tested" "$out/run.log" || true
	;;
cordoned)
	kubectl --kubeconfig "$kubeconfig" cordon "$node"
	trap 'kubectl --kubeconfig "$kubeconfig" uncordon "$node"' EXIT
	run --suites seccomp --label-filter kubelet
	grep -m2 -E "cordoned" "$out/run.log" || true
	tail -4 "$out/run.log"
	;;
timeout | killed)
	if [[ $fault == timeout ]]; then
		run --suites seccomp --label-filter kubelet --timeout 25s
	else
		run --suites seccomp --label-filter kubelet &
		pid=$!
		until grep -qE "^\[.*\] +(pass|deviation|fail|skip) +seccomp/" "$out/run.log" 2>/dev/null; do sleep 1; done
		# This run's suite processes only: the children of its skewproof
		# (another run on this host has its own).
		sp=$(pgrep -P "$pid" -f "skewproof.* run" | head -1)
		victim=$(pgrep -P "$sp" -f -- "skewproof-e2e.test.*-ginkgo.label-filter" | head -1)
		echo "killing suite process $victim (kill -9): $(tr '\0' ' ' </proc/"$victim"/cmdline | grep -o 'label-filter [^-]*')"
		kill -9 "$victim"
		wait "$pid"
	fi
	tail -1 "$out/run.log"
	junit=("$out"/run/junit-*.xml)
	echo "JUnit: $(grep -c '<testcase' "${junit[0]}") cases, $(grep -c '<failure' "${junit[0]}") <failure>, of them $(grep -c 'never reported' "${junit[0]}") never reported, $(grep -c 'Interrupted by Timeout' "${junit[0]}") interrupted by the timeout"
	grep -m1 -o 'planned but never reported: [^&]*' "${junit[0]}" || true
	jq -r '"run.json: verdict \(.verdict), exit status \(.exitStatus): \((.reason // "") | split("\n")[0])"' "$out/run/run.json"
	"$bin/skewproof" bundle --from "$out/run" --out "$out/results.tar.gz" --force >/dev/null || true
	rc=0
	"$bin/skewproof" bundle verify "$out/results.tar.gz" || rc=$?
	echo "bundle verify exit status: $rc"
	;;
*)
	echo "usage: $0 flaky|stopped|cordoned|timeout|killed [OUTDIR]" >&2
	exit 2
	;;
esac
