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

# uml_session_cpu PID prints the CPU-seconds (user + system) of every
# process in the session of PID (an AppArmor node's User-Mode Linux kernel
# and its address-space processes), children reaped included.
uml_session_cpu() {
	local tck total=0 f
	tck=$(getconf CLK_TCK)
	for f in /proc/[0-9]*/stat; do
		# fields after the command: 3 state … 6 session … 14 utime 15 stime 16 cutime 17 cstime
		read -r -a s < <(sed 's/^[0-9]* (.*) //' "$f" 2>/dev/null) || continue
		[[ ${#s[@]} -gt 14 && ${s[3]} == "$1" ]] || continue
		total=$((total + s[11] + s[12] + s[13] + s[14]))
	done
	awk -v t="$total" -v h="$tck" 'BEGIN{printf "%.2f", t/h}'
}

# uml_node_pids CLUSTER prints "NODE PID" of each AppArmor node of cluster
# CLUSTER, one a line (node.json has no newline at its end).
uml_node_pids() {
	local d l
	for d in "${SKEWPROOF_CACHE_DIR:-$HOME/.cache/skewproof}"/uml/nodes/"$1"-uml-worker*/; do
		l=$(sed -n 's/.*"name":"\([^"]*\)".*"pid":\([0-9]*\).*/\1 \2/p' "$d/node.json" 2>/dev/null || true)
		[[ -z $l ]] || echo "$l"
	done
}
