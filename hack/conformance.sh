#!/usr/bin/env bash
# make conformance: `skewproof run` on the default cluster — control plane at
# APISERVER, one worker per kubelet version in KUBELETS. The run brings the
# cluster up (building node images offline when they are not cached), installs
# the profiles, runs the suites, writes JUnit into ARTIFACTS (default
# _artifacts/) and deletes the cluster on success, failure and interrupt.
# MATRIX=1.34..1.37 runs every cluster of that version matrix instead
# (`skewproof run --matrix`), one after the other, and merges the results into
# ARTIFACTS/report/ (junit.xml, summary.json, matrix.md, matrix.html).
# APPARMOR_NODE=auto: on a host whose kernel has no AppArmor the default
# cluster gains an AppArmor node (--apparmor-node APISERVER: a worker on
# User-Mode Linux), so AppArmor is enforced; APPARMOR_NODE=X.Y.Z adds one of
# that kubelet version on any host; empty (the default) adds none.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${APISERVER:=1.37.2}" "${KUBELETS:=1.34.4,1.35.4,1.36.3,1.37.2}" "${CLUSTER:=conformance}"
# RUN_FLAGS is split into words on purpose (several flags).
if [[ -n "${MATRIX:-}" ]]; then
	# shellcheck disable=SC2086
	exec bin/skewproof run --name "$CLUSTER" --matrix "$MATRIX" --suites "${SUITES:-seccomp,apparmor,profiles}" --junit-dir "${ARTIFACTS:-_artifacts}" ${RUN_FLAGS:-}
fi
node=()
case "${APPARMOR_NODE:-}" in
"") ;;
auto)
	if [[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ]]; then
		node=(--apparmor-node "$APISERVER")
		echo "conformance: this host's kernel has no AppArmor: adding an AppArmor node (User-Mode Linux, kubelet $APISERVER)" >&2
	fi
	;;
*) node=(--apparmor-node "$APPARMOR_NODE") ;;
esac
# shellcheck disable=SC2086
exec bin/skewproof run --name "$CLUSTER" --apiserver "$APISERVER" --kubelets "$KUBELETS" "${node[@]}" --suites "${SUITES:-seccomp,apparmor,profiles}" --junit-dir "${ARTIFACTS:-_artifacts}" ${RUN_FLAGS:-}
