#!/usr/bin/env bash
# make conformance: bring up the default cluster, run the suites that exist
# against it, and delete it again whatever happens (also on interrupt).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${APISERVER:=1.37.2}" "${KUBELETS:=1.34.4,1.35.4,1.36.3,1.37.2}" "${CLUSTER:=conformance}"
BIN=bin/skewproof
ART=${ARTIFACTS:-_artifacts}
mkdir -p "$ART"
KUBECONFIG_PATH=$(mktemp -d)/kubeconfig
down() { "$BIN" cluster down --name "$CLUSTER" --kubeconfig "$KUBECONFIG_PATH" || true; rm -rf "$(dirname "$KUBECONFIG_PATH")"; }
trap down EXIT
trap 'exit 130' INT TERM
"$BIN" cluster up --name "$CLUSTER" --apiserver "$APISERVER" --kubelets "$KUBELETS" --kubeconfig "$KUBECONFIG_PATH"
if compgen -G "suites/*_test.go" >/dev/null || compgen -G "suites/*/*_test.go" >/dev/null; then
	SKEWPROOF_KUBECONFIG="$KUBECONFIG_PATH" go test -count=1 -timeout 60m ./suites/... -args -ginkgo.junit-report="$PWD/$ART/junit-$CLUSTER.xml"
else
	echo "conformance: no suites yet; cluster $CLUSTER came up with kubelets $KUBELETS" >&2
	KUBECONFIG="$KUBECONFIG_PATH" "$BIN" cluster list
fi
