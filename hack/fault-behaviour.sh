#!/usr/bin/env bash
# Faults for docs/suites/fault-injection.md ("Observe the profile, not the
# mode"): each leaves the mode or label a container shows as it was and
# breaks only what the profile does, so a check of the mode alone passes.
#
#   permissive-seccomp NODE  the node's runc gets a wrapper that, for the
#       containers of the seccomp suite's namespaces (skewproof-seccomp-*),
#       replaces any seccomp profile by an allow-all one that still installs
#       a filter (one rule, for acct(2), which no scenario makes): every such
#       container runs with "Seccomp: 2" and nothing is blocked.
#   ignore-apparmor NODE     the node's runc gets a wrapper that drops
#       .process.apparmorProfile for the containers of the AppArmor suite's
#       namespaces (skewproof-apparmor-*), and the node's OCI runtime label
#       becomes "noaa": a vendor runtime nobody has read, that ignores
#       AppArmor.
#   complain-deny-write NODE skewproof-deny-write is loaded again in complain
#       mode (apparmor_parser -C) from the agent's record of it.
#   first-only NODE          the node's runc gets a wrapper that confines only
#       each pod's container "app": every other container of the suites'
#       namespaces (init containers, sidecars, a second container, ephemeral
#       containers) loses its seccomp filter and AppArmor profile, as a
#       runtime or kubelet that applies the pod's profile to the first
#       container alone would run it.
#
# NODE is a kind node (docker exec) or the User-Mode Linux node of
# --apparmor-node (its exec directory under the cache, as
# clusters/internal/uml Node.Exec does). KUBECONFIG names the cluster for
# the node label.
#
# Usage: bash hack/fault-behaviour.sh install|remove FAULT NODE
set -euo pipefail
action=${1:?install or remove}
fault=${2:?permissive-seccomp, ignore-apparmor, complain-deny-write or first-only}
node=${3:?node name}
cache=${SKEWPROOF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skewproof}

# node_sh runs standard input as a shell script on the node.
node_sh() {
	if docker inspect --type container "$node" >/dev/null 2>&1; then
		docker exec -i "$node" sh -s
		return
	fi
	local dir=$cache/uml/nodes/$node/exec id rc
	[ -d "$dir" ] || { echo "no kind node or UML node $node" >&2; return 1; }
	id=fault-$$-$(date +%s%N)
	cat > "$dir/$id.sh.tmp" && mv "$dir/$id.sh.tmp" "$dir/$id.sh"
	until [ -e "$dir/$id.rc" ]; do sleep 0.5; done
	rc=$(cat "$dir/$id.rc")
	cat "$dir/$id.out"
	cat "$dir/$id.err" >&2
	rm -f "$dir/$id".*
	return "$rc"
}

# wrapper writes a runc wrapper whose jq filter FILTER rewrites the
# config.json of containers (not sandboxes) in namespaces matching NSGLOB.
wrapper() {
	local nsglob=$1 filter=$2
	node_sh <<EOF
cat > /usr/local/sbin/runc.fault <<'WRAPPER'
#!/bin/sh
# skewproof fault injection ($fault)
bundle=.
sub=
prev=
for a in "\$@"; do
	case "\$prev" in --bundle|-b) bundle=\$a ;; esac
	case "\$a" in --bundle=*) bundle=\${a#--bundle=} ;; create|run) [ -z "\$sub" ] && sub=\$a ;; esac
	prev=\$a
done
if [ -n "\$sub" ] && [ -f "\$bundle/config.json" ]; then
	ns=\$(jq -r '.annotations["io.kubernetes.cri.sandbox-namespace"] // ""' "\$bundle/config.json")
	pod=\$(jq -r '.annotations["io.kubernetes.cri.sandbox-name"] // ""' "\$bundle/config.json")
	kind=\$(jq -r '.annotations["io.kubernetes.cri.container-type"] // ""' "\$bundle/config.json")
	case "\$ns" in $nsglob)
		if [ "\$kind" = container ]; then
			jq '$filter' "\$bundle/config.json" > "\$bundle/config.json.fault" && mv "\$bundle/config.json.fault" "\$bundle/config.json"
			echo "\$(date +%T) $fault: \$ns/\$pod" >> /run/skewproof-fault.log
		fi
	;; esac
fi
exec /usr/sbin/runc "\$@"
WRAPPER
chmod 0755 /usr/local/sbin/runc.fault
rm -f /run/skewproof-fault.log
ln -sfn /usr/local/sbin/runc.fault /usr/local/sbin/runc
EOF
}

unwrap() {
	echo 'ln -sfn /usr/sbin/runc /usr/local/sbin/runc && rm -f /usr/local/sbin/runc.fault' | node_sh
}

record=/var/lib/kubelet/seccomp/skewproof-profiles/skewproof-fixtures/.apparmor/skewproof-deny-write

case "$action/$fault" in
install/permissive-seccomp)
	wrapper 'skewproof-seccomp-*' 'if .linux.seccomp then .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", architectures: (.linux.seccomp.architectures // []), syscalls: [{names: ["acct"], action: "SCMP_ACT_ERRNO"}]} else . end'
	echo "$node: runc gives every seccomp-confined container of skewproof-seccomp-* an allow-all filter (log: /run/skewproof-fault.log)"
	;;
remove/permissive-seccomp)
	unwrap
	echo "$node: runc restored"
	;;
install/ignore-apparmor)
	wrapper 'skewproof-apparmor-*' 'del(.process.apparmorProfile)'
	kubectl label node "$node" skewproof.io/oci-runtime=noaa skewproof.io/oci-runtime-version=1.0 --overwrite
	echo "$node: runc drops the AppArmor profile of every container of skewproof-apparmor-*; node labelled oci-runtime=noaa"
	;;
remove/ignore-apparmor)
	unwrap
	kubectl label node "$node" skewproof.io/oci-runtime=runc skewproof.io/oci-runtime-version="${OCI_VERSION:?the runc version label of the node to restore}" --overwrite
	echo "$node: runc and its labels restored"
	;;
install/first-only)
	wrapper 'skewproof-seccomp-*|skewproof-apparmor-*' 'if (.annotations["io.kubernetes.cri.container-name"] // "") != "app" then del(.linux.seccomp) | del(.process.apparmorProfile) else . end'
	echo "$node: runc confines only container app of each pod of the suites' namespaces (log: /run/skewproof-fault.log)"
	;;
remove/first-only)
	unwrap
	echo "$node: runc restored"
	;;
install/complain-deny-write)
	# The record exists while the fixtures are installed: between runs
	# that keep them (--keep).
	echo "test -f $record || { echo 'no $record: the fixtures are not installed (keep them with run --keep)' >&2; exit 1; }
apparmor_parser -r -C $record && grep skewproof-deny-write /sys/kernel/security/apparmor/profiles" | node_sh
	;;
remove/complain-deny-write)
	echo "apparmor_parser -r $record && grep skewproof-deny-write /sys/kernel/security/apparmor/profiles" | node_sh
	;;
*)
	echo "usage: $0 install|remove permissive-seccomp|ignore-apparmor|complain-deny-write|first-only NODE" >&2
	exit 2
	;;
esac
