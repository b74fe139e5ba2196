#!/usr/bin/env bash
# make conformance: `skewproof run` on the default cluster — control plane at
# APISERVER, one worker per kubelet version in KUBELETS. The run brings the
# cluster up (building node images offline when they are not cached), installs
# the profiles, runs the suites, writes JUnit into ARTIFACTS (default
# _artifacts/) and deletes the cluster on success, failure and interrupt.
# MATRIX=1.34..1.37 runs every cluster of that version matrix instead
# (`skewproof run --matrix`), one after the other, and merges the results into
# ARTIFACTS/report/ (junit.xml, summary.json, matrix.md, matrix.html).
# HISTORY=1 runs the history preset the same way (`--matrix history
# --remove-images=auto --matrix-parallel auto`): the
# clusters of the annotation eras (seccomp v1.19-v1.27, AppArmor
# v1.29-v1.31), each with the suites its versions were read for.
# AppArmor nodes (workers on User-Mode Linux whose kernel enforces AppArmor,
# `skewproof run --apparmor-node`): by default (APPARMOR_NODE unset or
# auto) a host whose kernel has no AppArmor gets one per kubelet of each
# cluster, so every AppArmor enforcement row is judged at every kubelet;
# APPARMOR_NODE=off leaves them out (the run's summary then says which rows
# it could not judge), =all adds them on any host, =1.34.4,1.37.2 only those.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${APISERVER:=1.37.2}" "${KUBELETS:=1.34.4,1.35.4,1.36.3,1.37.2}" "${CLUSTER:=conformance}"
# RUN_FLAGS is split into words on purpose (several flags).
if [[ -n "${HISTORY:-}" && "${HISTORY}" != 0 ]]; then
	MATRIX=history
	# Eleven clusters: their node images stay for the next run when the disk
	# holds them all; otherwise each one's go once it is deleted (the build
	# cache stays), so that the disk holds only those of the clusters that
	# run at once: one per core and one more, as many as memory fits (a
	# --remove-images or --matrix-parallel in RUN_FLAGS comes later and wins).
	RUN_FLAGS="--remove-images=auto --matrix-parallel auto ${RUN_FLAGS:-}"
fi
if [[ -n "${MATRIX:-}" ]]; then
	# shellcheck disable=SC2086
	exec bin/skewproof run --name "$CLUSTER" --matrix "$MATRIX" --apparmor-node "${APPARMOR_NODE:-auto}" --suites "${SUITES:-seccomp,apparmor,profiles}" --junit-dir "${ARTIFACTS:-_artifacts}" ${RUN_FLAGS:-}
fi
# shellcheck disable=SC2086
exec bin/skewproof run --name "$CLUSTER" --apiserver "$APISERVER" --kubelets "$KUBELETS" --apparmor-node "${APPARMOR_NODE:-auto}" --suites "${SUITES:-seccomp,apparmor,profiles}" --junit-dir "${ARTIFACTS:-_artifacts}" ${RUN_FLAGS:-}
