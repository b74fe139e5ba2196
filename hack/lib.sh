# shellcheck shell=bash
# Shell functions of the hack/ scripts that make a cluster; source it.

# with_cluster_cleanup BIN NAME makes the temporary directory $TMP and, on
# exit or interrupt, deletes cluster NAME (with BIN, a skewproof binary)
# and $TMP.
with_cluster_cleanup() {
	CLEANUP_BIN=$1
	CLEANUP_NAME=$2
	TMP=$(mktemp -d)
	trap '"$CLEANUP_BIN" cluster down --name "$CLEANUP_NAME" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
	trap 'exit 130' INT TERM
}
