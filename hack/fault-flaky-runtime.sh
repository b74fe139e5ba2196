#!/usr/bin/env bash
# A fault for docs/suites/fault-injection.md: makes NODE's default OCI
# runtime drop seccomp from a spec's first attempt and not from its retry.
#
# It replaces the node's runc (/usr/local/sbin/runc, a link to Debian's
# runc) with a wrapper that, on "create", reads the container's CRI
# annotations from the bundle's config.json. The first time a pod name is
# seen in a namespace of the seccomp suite (skewproof-seccomp-*), its
# containers lose .linux.seccomp; the same pod name in another namespace
# (Ginkgo's retry gets a new namespace) keeps it. So every spec that runs
# a pod with a seccomp profile fails its first attempt and passes its retry.
#
# Usage: bash hack/fault-flaky-runtime.sh install NODE
#        bash hack/fault-flaky-runtime.sh remove NODE
set -euo pipefail
action=${1:?install or remove}
node=${2:?node container name}
case "$action" in
install)
	docker exec -i "$node" sh -c 'cat > /usr/local/sbin/runc.fault && chmod 0755 /usr/local/sbin/runc.fault' <<'WRAPPER'
#!/bin/sh
# skewproof fault injection: seccomp dropped from a pod's first attempt
bundle=.
sub=
prev=
for a in "$@"; do
	case "$prev" in --bundle|-b) bundle=$a ;; esac
	case "$a" in --bundle=*) bundle=${a#--bundle=} ;; create|run) [ -z "$sub" ] && sub=$a ;; esac
	prev=$a
done
if [ -n "$sub" ] && [ -f "$bundle/config.json" ]; then
	ns=$(jq -r '.annotations["io.kubernetes.cri.sandbox-namespace"] // ""' "$bundle/config.json")
	pod=$(jq -r '.annotations["io.kubernetes.cri.sandbox-name"] // ""' "$bundle/config.json")
	kind=$(jq -r '.annotations["io.kubernetes.cri.container-type"] // ""' "$bundle/config.json")
	case "$ns" in skewproof-seccomp-*)
		seen=/run/skewproof-fault-seen
		first=$(grep "^$pod " "$seen" 2>/dev/null | head -1 | cut -d' ' -f2)
		if [ -z "$first" ]; then
			echo "$pod $ns" >> "$seen"
			first=$ns
		fi
		if [ "$first" = "$ns" ] && [ "$kind" = container ]; then
			jq 'del(.linux.seccomp)' "$bundle/config.json" > "$bundle/config.json.fault" && mv "$bundle/config.json.fault" "$bundle/config.json"
			echo "$(date +%T) dropped seccomp: $ns/$pod" >> /run/skewproof-fault.log
		fi
	;; esac
fi
exec /usr/sbin/runc "$@"
WRAPPER
	docker exec "$node" sh -c 'rm -f /run/skewproof-fault-seen /run/skewproof-fault.log && ln -sfn /usr/local/sbin/runc.fault /usr/local/sbin/runc'
	echo "$node: runc drops seccomp from each pod's first attempt in skewproof-seccomp-* namespaces (log: /run/skewproof-fault.log)"
	;;
remove)
	docker exec "$node" sh -c 'ln -sfn /usr/sbin/runc /usr/local/sbin/runc && rm -f /usr/local/sbin/runc.fault'
	echo "$node: runc restored"
	;;
*)
	echo "usage: $0 install|remove NODE" >&2
	exit 2
	;;
esac
