#!/usr/bin/env bash
# Interrupts `skewproof run` at points across its life and checks that
# nothing of the project is left behind.
#
# For each signal (SIGINT, SIGTERM) and each point, a run starts in a session
# of its own (as a terminal's foreground job would be), the script waits for
# the progress line that marks the point, sends the signal to the run's
# process group, waits for the exit (status 130 expected), and compares a
# snapshot of everything the project can create, taken before and after:
# containers, networks, volumes, images (by ID), kubeconfigs under ~/.kube,
# entries in $TMPDIR and in the cache's build area, mounts, processes of the
# run's session; on an existing cluster (--kubeconfig mode) also namespaces,
# RuntimeClasses, CRDs, cluster roles and bindings, DaemonSets and the
# profile files on every node. Any difference is a leak. After each signal's
# points the same run must succeed. Then: a second interrupt during the
# clean-up, and SIGKILL (which cannot be caught): `cluster list` must show
# what the killed run left with the command that removes it, a new `run`
# of the same name must refuse, and `cluster down` must remove it.
#
# Usage: bash hack/interrupt-test.sh [OUTDIR]
#   SIGNALS="INT TERM"  POINTS="base-image node-image ..."  (subsets)
#   EXTRA=0: without the extra cases; EXTRA=only: only them (second signal,
#   SIGKILL, an existing cluster)   SKEWPROOF=path/to/skewproof
#   SKEWPROOF_REV=commit it was built from (default: HEAD)
# Needs: make build; Docker; node images for 1.37.2 with kubelet 1.36.3
# (built when missing). Takes about 45 minutes for everything.
set -uo pipefail
cd "$(dirname "$0")/.." || exit
out=${1:-_artifacts/interrupt-test}
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=${SKEWPROOF:-$PWD/bin/skewproof}
signals=${SIGNALS:-INT TERM}
all_points="base-image node-image kind-create networking readiness agent profiles suite-start mid-suite junit teardown"
points=${POINTS:-$all_points}
name=interrupt
existing=interrupt-existing
apiserver=1.37.2
kubelet=1.36.3
ids=seccomp/kubelet/enforce,seccomp/kubelet/precedence,seccomp/create/match,seccomp/create/mismatch,seccomp/create/none,seccomp/update/field-immutable,seccomp/failure/row-3,seccomp/template/instantiation
cache=${SKEWPROOF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skewproof}
# Every temporary file of the runs goes here: it must be empty after each.
export TMPDIR=$out/tmp
mkdir -p "$TMPDIR"
results=$out/results.md
leaks_total=0
fails_total=0

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

# point NAME -> "REGEX|DELAY": the progress line that marks the point and the
# seconds to wait after it before the signal.
point() {
	case $1 in
	base-image) echo 'debootstrap .* \.\.\.$|8' ;;
	node-image) echo 'assembling node image .* \.\.\.$|4' ;;
	kind-create) echo 'creating cluster |12' ;;
	networking) echo 'pod networking .* \.\.\.$|0' ;;
	readiness) echo 'waiting for nodes Ready .* \.\.\.$|8' ;;
	agent) echo 'loading the agent image .* \.\.\.$|1' ;;
	profiles) echo 'installing .* profiles through the agent .* \.\.\.$|2' ;;
	suite-start) echo 'running the seccomp suite|0.3' ;;
	mid-suite) echo '\] (pass|fail|deviation|skip|flaky) +seccomp/|0' ;;
	junit) echo 'seccomp suite finished|0' ;;
	teardown) echo 'deleting cluster .* \.\.\.$|0.5' ;;
	*) echo "unknown point $1" >&2; exit 2 ;;
	esac
}

# snapshot [KUBECONFIG]: one line per thing the project can create.
# Only the run's own names and what nobody uses (dangling volumes and
# images) count, so that other clusters may come and go meanwhile.
snapshot() {
	docker ps -a --format 'container {{.Names}}' | grep -E "^container ($name-|skewproof-build-)" || true
	docker network ls --format 'network {{.Name}}' | grep "^network skewproof-$name\$" || true
	docker volume ls -q -f dangling=true | sed 's/^/volume /'
	docker images -a --no-trunc -f dangling=true --format 'image {{.ID}}' | sort -u
	docker images --no-trunc --format 'image {{.Repository}}:{{.Tag}} {{.ID}}' 'skewproof-*' | grep -v interrupt-backup
	find "$HOME/.kube" -maxdepth 1 -name "skewproof-$name.yaml" -printf 'kubeconfig %f\n' 2>/dev/null
	find "$TMPDIR" -mindepth 1 -maxdepth 1 -printf 'tmp %f\n'
	find "$cache" -maxdepth 3 \( -name '.*build-*' -o -name '*.tmp-*' -o -name '.skewproof-*' \) 2>/dev/null | sed 's/^/cache-temp /'
	grep -E "$cache|$TMPDIR|/tmp/skewproof" /proc/mounts | awk '{print "mount " $2}'
	if [ -n "${1:-}" ]; then
		local k=(kubectl --kubeconfig "$1")
		"${k[@]}" get ns -o name | sed 's/^/api /'
		"${k[@]}" get runtimeclass,crd,clusterrole,clusterrolebinding -o name | sed 's/^/api /'
		"${k[@]}" get ds,deploy,pod -A -o name | grep -v -- '-[a-z0-9]\{5\}$' | sed 's/^/api /' || true
		for n in $(docker ps --format '{{.Names}}' --filter "label=io.x-k8s.kind.cluster=$existing"); do
			# The kubelet's seccomp root itself is not counted: the agent's
			# hostPath mount creates it on a node that lacks it, and it stays
			# as the kubelet's standard directory (docs/reliability.md).
			docker exec "$n" sh -c 'find /var/lib/kubelet/seccomp /etc/apparmor.d /etc/kubernetes/manifests 2>/dev/null' |
				{ grep -vx /var/lib/kubelet/seccomp || true; } | sed "s|^|node-file $n:|"
		done
	fi
}

# session_procs PID: processes left in the run's session. A process killed
# with the run shows as <defunct> until its reaper collects it (PID 1, for
# one whose parent died first, as debootstrap's children do): that is
# waited for, up to 10 s; whatever remains then counts, zombies included.
session_procs() {
	local _
	for _ in $(seq 1 20); do
		ps -e -o sid=,stat= | awk -v s="$1" '$1 == s && $2 ~ /^Z/ {z = 1} END {exit !z}' || break
		sleep 0.5
	done
	ps -e -o sid=,pid=,args= | awk -v s="$1" '$1 == s {print "process " $0}'
}

# restore_tags: put back the tags the build points removed.
declare -A untagged=()
restore_tags() {
	for ref in "${!untagged[@]}"; do
		docker tag "${untagged[$ref]}" "$ref" && docker rmi "${untagged[$ref]}" >/dev/null && log "restored tag $ref"
		unset "untagged[$ref]"
	done
}
untag() { # untag REF: make the next run build it (a backup tag keeps the image)
	local backup=skewproof-interrupt-backup:${1##*:}
	docker tag "$1" "$backup" || return 1
	untagged[$1]=$backup
	docker rmi "$1" >/dev/null
}
base_ref() { docker images skewproof-base --format '{{.Repository}}:{{.Tag}}' | head -1; }
node_ref() { docker images skewproof-node --format '{{.Repository}}:{{.Tag}}' | grep -- "v$apiserver-kubelet-v$kubelet-" | head -1; }

# interrupt SIGNAL POINT [MODE]: one interrupted run; MODE is "" (a new
# cluster), "existing" (--kubeconfig), "twice" (a second signal during the
# clean-up) or "kill" (SIGKILL to the run's process only).
interrupt() {
	local sig=$1 pt=$2 mode=${3:-} spec re delay runlog kc="" args
	spec=$(point "$pt")
	re=${spec%|*}
	delay=${spec##*|}
	runlog=$out/$sig-$pt${mode:+-$mode}.log
	args=(run --name "$name" --apiserver "$apiserver" --kubelets "$kubelet" --suites seccomp --ids "$ids" --junit-dir "$out/junit")
	if [ "$mode" = existing ]; then
		kc=$HOME/.kube/skewproof-$existing.yaml
		args=(run --name "$name" --kubeconfig "$kc" --suites seccomp --ids "$ids" --junit-dir "$out/junit")
	fi
	case $pt in
	base-image) untag "$(base_ref)" ;;
	node-image) untag "$(node_ref)" ;;
	esac
	snapshot "$kc" | sort >"$out/before"
	local t0 sent=0 rc pid
	t0=$(date +%s.%N)
	setsid "$bin" "${args[@]}" >"$runlog" 2>&1 &
	pid=$!
	while ! grep -qE -- "$re" "$runlog"; do
		if ! kill -0 "$pid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		sleep "$delay"
		sent=$(echo "$(date +%s.%N) - $t0" | bc)
		if [ "$mode" = kill ]; then
			kill -KILL "$pid"
		else
			kill -s "$sig" -- "-$pid" 2>/dev/null
		fi
		if [ "$mode" = twice ]; then
			sleep 2
			kill -s "$sig" -- "-$pid" 2>/dev/null
		fi
	fi
	wait "$pid"
	rc=$?
	local took
	took=$(echo "$(date +%s.%N) - $t0" | bc)
	if [ "$mode" = kill ]; then
		restore_tags
		killed_run "$pid" "$runlog" "$sent" "$took"
		return
	fi
	sleep 1
	{ snapshot "$kc"; session_procs "$pid"; } | sort >"$out/after"
	# The tags the build points removed are put back only now: taken
	# after, the snapshot would count the script's own tag as a leak.
	restore_tags
	local leaks note=""
	leaks=$(comm -13 "$out/before" "$out/after" | tr '\n' ';' | sed 's/;$//')
	[ "$sent" = 0 ] && note="the run ended before the point (exit $rc)"
	# Once every spec has finished (JUnit writing, teardown), the run's own
	# result stands (0) if its clean-up completed; before that, 130.
	case $pt in
	junit | teardown) [ "$sent" != 0 ] && [ "$rc" != 130 ] && [ "$rc" != 0 ] && note="exit $rc, want 130 or 0" ;;
	*) [ "$sent" != 0 ] && [ "$rc" != 130 ] && note="exit $rc, want 130" ;;
	esac
	local last
	last=$(grep -E '^\[' "$runlog" | grep -vE 'interrupted|deleting|deleted|cancel' | tail -1 | cut -c1-90 | sed 's/|/\\|/g')
	printf '| SIG%s | %s%s | %.1f s | %s | %.1f s | %s | %s |\n' "$sig" "$pt" "${mode:+ ($mode)}" "$sent" "$rc" "$took" \
		"${leaks:-none}" "${note:-$last}" >>"$results"
	if [ -n "$leaks" ]; then
		leaks_total=$((leaks_total + 1))
		log "LEAK at SIG$sig $pt: $leaks"
		cleanup_leftovers
	fi
	if [ -n "$note" ]; then
		fails_total=$((fails_total + 1))
		log "FAIL at SIG$sig $pt: $note"
	fi
	log "SIG$sig $pt${mode:+ ($mode)}: sent at ${sent}s, exit $rc, ${took}s, leaks: ${leaks:-none}"
}

# killed_run PID LOG SENT TOOK: what SIGKILL left must be found and removable.
killed_run() {
	local pid=$1 runlog=$2 sent=$3 took=$4 list refuse down after note=""
	sleep 2
	list=$("$bin" cluster list 2>&1)
	refuse=$("$bin" run --name "$name" --apiserver "$apiserver" --kubelets "$kubelet" --suites seccomp --ids "$ids" --junit-dir "$out/junit-refused" 2>&1)
	local refuse_rc=$?
	echo "$list" >"$out/KILL-cluster-list.txt"
	echo "$refuse" >"$out/KILL-run-refused.txt"
	grep -q "$name" <<<"$list" || note="cluster list does not show $name; "
	grep -q "cluster down --name $name" <<<"$list" || note+="cluster list does not offer 'cluster down --name $name'; "
	[ "$refuse_rc" != 0 ] && grep -q "cluster down --name $name" <<<"$refuse" || note+="a new run of the same name did not refuse with the remedy; "
	down=$("$bin" cluster down --name "$name" 2>&1) || note+="cluster down failed: $down; "
	sleep 1
	after=$({ snapshot; session_procs "$pid"; } | sort | comm -13 "$out/before" - | tr '\n' ';' | sed 's/;$//')
	[ -n "$after" ] && note+="left after cluster down: $after"
	# shellcheck disable=SC2016 # backquotes are Markdown
	printf '| SIGKILL | mid-suite (run process only) | %.1f s | 137 | %.1f s | cluster, network, kubeconfig: found by `cluster list` (%s) | %s |\n' \
		"$sent" "$took" "$(grep "$name" <<<"$list" | head -1 | tr -s ' ' | cut -c1-120)" "${note:-refused: $(head -1 <<<"$refuse" | cut -c1-100); removed by cluster down}" >>"$results"
	if [ -n "$note" ]; then
		fails_total=$((fails_total + 1))
		log "FAIL at SIGKILL: $note"
		cleanup_leftovers
	fi
	log "SIGKILL: $note"
}

cleanup_leftovers() {
	"$bin" cluster down --name "$name" >/dev/null 2>&1 || true
	docker ps -aq --filter name=skewproof-build- | xargs -r docker rm -f >/dev/null
	find "$TMPDIR" -mindepth 1 -delete 2>/dev/null || true
}

# finish SIG: the same run, uninterrupted, must succeed.
finish() {
	local rc=0
	"$bin" run --name "$name" --apiserver "$apiserver" --kubelets "$kubelet" --suites seccomp --ids "$ids" \
		--junit-dir "$out/junit-after-$1" >"$out/$1-after.log" 2>&1 || rc=$?
	local summary
	summary=$(grep -E '^[0-9]+ specs:' "$out/$1-after.log" | tail -1)
	printf '| SIG%s | the same run afterwards | — | %s | — | — | %s |\n' "$1" "$rc" "$summary" >>"$results"
	[ "$rc" = 0 ] || { fails_total=$((fails_total + 1)); log "FAIL: the run after SIG$1 exited $rc"; }
}

# extra: a second signal during the clean-up, SIGKILL, and the points of a
# run against an existing cluster.
extra() {
	interrupt INT mid-suite twice
	interrupt INT teardown twice
	interrupt TERM mid-suite twice
	interrupt KILL mid-suite kill
	log "an existing cluster for --kubeconfig mode"
	"$bin" cluster up --name "$existing" --apiserver "$apiserver" --kubelets "$kubelet" >"$out/existing-up.log" 2>&1 ||
		{ log "cluster up failed"; tail "$out/existing-up.log"; exit 1; }
	for sig in INT TERM; do
		for pt in agent profiles suite-start mid-suite; do
			interrupt "$sig" "$pt" existing
		done
	done
	"$bin" cluster down --name "$existing" >/dev/null 2>&1
}

trap 'restore_tags; cleanup_leftovers; "$bin" cluster down --name "$existing" >/dev/null 2>&1' EXIT
{
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GB, load $(cut -d' ' -f1-3 /proc/loadavg); skewproof of commit ${SKEWPROOF_REV:-$(git rev-parse --short HEAD)}"
	echo
	echo '| signal | point | sent after | exit | run took | leaks | last progress line before the signal / note |'
	echo '| --- | --- | --- | --- | --- | --- | --- |'
} >"$results"

# POINTS and SIGNALS select the points of a new cluster; EXTRA=0 leaves out
# the second signal, SIGKILL and the existing cluster, EXTRA=only runs only them.
if [ "${EXTRA:-1}" != only ]; then
	for sig in $signals; do
		for pt in $points; do
			interrupt "$sig" "$pt"
		done
		finish "$sig"
	done
fi
if [ "${EXTRA:-1}" != 0 ] && { [ -z "${POINTS:-}" ] || [ "${EXTRA:-1}" = only ]; }; then
	extra
fi
cat "$results"
echo
echo "runs with leaks: $leaks_total; other failures: $fails_total"
[ "$leaks_total" = 0 ] && [ "$fails_total" = 0 ]
