#!/usr/bin/env bash
# The acceptance run and the faults of docs/suites/fault-injection.md
# ("Observe the profile, not the mode"), one after the other on one cluster:
# the run of --suites seccomp,apparmor on a new cluster of 1.37.2 with
# workers 1.34.4, 1.37.2 and an AppArmor node 1.37.2, kept; then each fault
# of hack/fault-behaviour.sh with a small run --kubeconfig against it (with
# this build, and with OLD_BIN, another build, where given); then the cluster
# down. Run it under the cluster lock:
#   flock /tmp/skewproof-cluster.lock bash hack/behaviour-checks.sh [OUTDIR]
# BIN=dir of the build to run (default bin); NAME=cluster name (default wtb).
set -u
cd "$(dirname "$0")/.." || exit 1
out=${1:-_artifacts/behaviour}
bin=${BIN:-bin}
name=${NAME:-wtb}
mkdir -p "$out"
log() { echo "$(date -u +%T) $*" | tee -a "$out/session.log"; }
log "acceptance run"
"$bin/skewproof" run --name "$name" --apiserver 1.37.2 --kubelets 1.34.4,1.37.2 --apparmor-node 1.37.2 \
	--suites seccomp,apparmor --junit-dir "$out/run" --keep > "$out/run.log" 2>&1
log "acceptance run exit $?"
export KUBECONFIG=$HOME/.kube/skewproof-$name.yaml
uml=$name-uml-worker
ocv=$(kubectl get node "$uml" -o jsonpath='{.metadata.labels.skewproof\.io/oci-runtime-version}')
frun() { # NAME BIN ARGS...
	local n=$1 b=$2
	shift 2
	log "fault run $n ($b)"
	# --keep: the fixtures stay installed between the runs (the complain
	# fault changes the loaded profile; a run without --keep removes the
	# fixtures at its end and loads them again at its start).
	"$b/skewproof" run --kubeconfig "$KUBECONFIG" --name "$name" --junit-dir "$out/$n" --keep "$@" > "$out/$n.log" 2>&1
	log "fault run $n exit $?"
	grep -E "specs: " "$out/$n.log" | tail -1 | tee -a "$out/session.log"
}
F="bash hack/fault-behaviour.sh"
sec=seccomp/ephemeral/inherit,seccomp/kubelet/precedence,seccomp/update/annotation-ignored,seccomp/kubelet/enforce,seccomp/kubelet/localhost
aa=apparmor/create/empty-annotation,apparmor/static-pod/annotation-copy,apparmor/kubelet/enforce,apparmor/ephemeral/inherit
$F install permissive-seccomp "$name-worker2"
frun permissive "$bin" --suites seccomp --label-filter "!(node: containsAny $uml)" --ids "$sec"
[ -n "${OLD_BIN:-}" ] && frun permissive-old "$OLD_BIN" --suites seccomp --label-filter "!(node: containsAny $uml)" --ids "$sec"
$F remove permissive-seccomp "$name-worker2"
$F install ignore-apparmor "$uml"
frun noaa "$bin" --suites apparmor --ids "$aa"
[ -n "${OLD_BIN:-}" ] && frun noaa-old "$OLD_BIN" --suites apparmor --ids "$aa"
OCI_VERSION=$ocv $F remove ignore-apparmor "$uml"
$F install complain-deny-write "$uml"
frun complain "$bin" --suites apparmor --ids apparmor/failure/row-2
$F remove complain-deny-write "$uml"
log "down"
"$bin/skewproof" cluster down --name "$name" >> "$out/session.log" 2>&1
log "end"
