#!/usr/bin/env bash
# Makes a Debian host ready to run skewproof clusters. Idempotent.
#  - installs the Docker engine (Debian's docker.io), debootstrap, jq,
#    busybox-static, shellcheck (make verify) and chromium (the browser check of 'skewproof report's
#    matrix.html) when missing, and what CRI-O nodes are built with: gcc,
#    libc6-dev (pinns is C), libseccomp-dev and pkg-config (crio links
#    libseccomp);
#  - makes sure apt knows a version of the apparmor package (the agent image
#    takes apparmor_parser from it with apt-get download; the host's kernel
#    needs no AppArmor for that);
#  - when this process's capability bounding set lacks capabilities that a
#    privileged container asks for (so every kind node fails with
#    "unable to apply caps: operation not permitted"), installs an OCI runtime
#    wrapper that drops exactly those capabilities and makes it Docker's
#    default runtime;
#  - raises fs.inotify.max_user_instances to 512 and max_user_watches to
#    524288 when lower (kind's known issue "too many open files": the
#    processes of every kind node share root's inotify instances, and at the
#    kernel's default of 128 three clusters at once run kube-proxy out of
#    them);
#  - starts dockerd when it is not running and waits until it answers;
#  - with --uml (or SKEWPROOF_UML=1), installs what `--apparmor-node` (a
#    worker on User-Mode Linux) needs: the tools skewproof builds the node's
#    UML kernel with from Debian's kernel source (gcc, make, flex, bison, bc,
#    libelf-dev, xz-utils) and e2fsprogs for its disk.
set -euo pipefail

uml=${SKEWPROOF_UML:-0}
for a in "$@"; do
	case "$a" in
	--uml) uml=1 ;;
	*) printf 'setup-host: unknown option %s (known: --uml)\n' "$a" >&2; exit 2 ;;
	esac
done

log() { printf 'setup-host: %s\n' "$*" >&2; }
die() { printf 'setup-host: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and configures dockerd); re-run with sudo"

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
command -v jq >/dev/null 2>&1 || need_pkgs+=(jq)
[ -x /bin/busybox ] || need_pkgs+=(busybox-static)
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
command -v shellcheck >/dev/null 2>&1 || need_pkgs+=(shellcheck)
command -v gcc >/dev/null 2>&1 || need_pkgs+=(gcc)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || [ -f /usr/lib/libc.a ] || need_pkgs+=(libc6-dev)
command -v pkg-config >/dev/null 2>&1 || need_pkgs+=(pkg-config)
[ -f /usr/include/seccomp.h ] || need_pkgs+=(libseccomp-dev)
if [ "$uml" = 1 ]; then
	command -v mkfs.ext4 >/dev/null 2>&1 || need_pkgs+=(e2fsprogs)
	command -v make >/dev/null 2>&1 || need_pkgs+=(make)
	command -v flex >/dev/null 2>&1 || need_pkgs+=(flex)
	command -v bison >/dev/null 2>&1 || need_pkgs+=(bison)
	command -v bc >/dev/null 2>&1 || need_pkgs+=(bc)
	command -v xz >/dev/null 2>&1 || need_pkgs+=(xz-utils)
	command -v dpkg-deb >/dev/null 2>&1 || need_pkgs+=(dpkg)
	[ -f /usr/include/libelf.h ] || need_pkgs+=(libelf-dev)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
	command -v apt-get >/dev/null 2>&1 || die "missing ${need_pkgs[*]} and no apt-get here; install them with your package manager"
	log "installing ${need_pkgs[*]} (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed; check the Debian mirror is reachable"
	apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null || die "apt-get install ${need_pkgs[*]} failed"
fi

# The agent image's apparmor_parser comes from Debian's apparmor package
# (apt-get download): apt must know a candidate version.
if command -v apt-cache >/dev/null 2>&1; then
	if ! apt-cache policy apparmor 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		log "apt knows no version of apparmor: apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || log "apt-get update failed: the agent image will have no apparmor_parser"
	fi
else
	log "no apt here: the agent image will have no apparmor_parser (nodes with AppArmor then report Failed for AppArmorProfiles)"
fi

# Capabilities, by number (linux/capability.h).
CAPS=(CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID CAP_KILL
	CAP_SETGID CAP_SETUID CAP_SETPCAP CAP_LINUX_IMMUTABLE CAP_NET_BIND_SERVICE
	CAP_NET_BROADCAST CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK CAP_IPC_OWNER CAP_SYS_MODULE
	CAP_SYS_RAWIO CAP_SYS_CHROOT CAP_SYS_PTRACE CAP_SYS_PACCT CAP_SYS_ADMIN CAP_SYS_BOOT
	CAP_SYS_NICE CAP_SYS_RESOURCE CAP_SYS_TIME CAP_SYS_TTY_CONFIG CAP_MKNOD CAP_LEASE
	CAP_AUDIT_WRITE CAP_AUDIT_CONTROL CAP_SETFCAP CAP_MAC_OVERRIDE CAP_MAC_ADMIN CAP_SYSLOG
	CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_AUDIT_READ CAP_PERFMON CAP_BPF CAP_CHECKPOINT_RESTORE)
last=$(cat /proc/sys/kernel/cap_last_cap 2>/dev/null || echo 40)
bnd=$((16#$(awk '/^CapBnd:/{print $2}' /proc/self/status)))
missing=()
for ((i = 0; i <= last && i < ${#CAPS[@]}; i++)); do
	(((bnd >> i) & 1)) || missing+=("${CAPS[$i]}")
done

WRAPPER=/usr/local/libexec/skewproof/runc
RUNTIME_NAME=skewproof-runc
changed=0
if [ ${#missing[@]} -gt 0 ]; then
	real=$(command -v runc || true)
	[ -n "$real" ] || die "runc not found; install docker.io (it brings runc)"
	mkdir -p "$(dirname "$WRAPPER")"
	miss_json=$(printf '%s\n' "${missing[@]}" | jq -R . | jq -cs .)
	tmp=$(mktemp "$WRAPPER.XXXXXX")
	cat >"$tmp" <<WRAP
#!/bin/bash
# OCI runtime wrapper installed by skewproof's hack/setup-host.sh: removes the
# capabilities missing from this host's bounding set ($miss_json) from the
# process of containers being created or exec'd, then runs the real runc.
REAL=$real
MISSING='$miss_json'
strip() { # file jq-path
	local f=\$1 p=\$2 t
	[ -f "\$f" ] || return 0
	t=\$(mktemp "\$f.XXXXXX") || return 0
	if jq --argjson m "\$MISSING" "(\$p) |= (if . == null then . else with_entries(.value |= (if type == \"array\" then map(select(. as \\\$c | \\\$m | index(\\\$c) | not)) else . end)) end)" "\$f" >"\$t"; then
		cat "\$t" >"\$f"
	fi
	rm -f "\$t"
}
sub= bundle= process=
args=("\$@")
for ((i = 0; i < \${#args[@]}; i++)); do
	a=\${args[\$i]}
	case "\$a" in
	--bundle | -b) bundle=\${args[\$((i + 1))]} ;;
	--bundle=*) bundle=\${a#--bundle=} ;;
	--process | -p) process=\${args[\$((i + 1))]} ;;
	--process=*) process=\${a#--process=} ;;
	create | run | exec) [ -z "\$sub" ] && sub=\$a ;;
	esac
done
case "\$sub" in
create | run) strip "\${bundle:-.}/config.json" .process.capabilities ;;
exec) [ -n "\$process" ] && strip "\$process" .capabilities ;;
esac
exec "\$REAL" "\$@"
WRAP
	chmod 0755 "$tmp"
	if ! cmp -s "$tmp" "$WRAPPER" 2>/dev/null; then
		log "capability bounding set lacks ${missing[*]}: privileged containers cannot start; installing runtime wrapper $WRAPPER"
		mv "$tmp" "$WRAPPER"
		changed=1
	else
		log "capability bounding set lacks ${missing[*]}: runtime wrapper $WRAPPER in place"
		rm -f "$tmp"
	fi
	mkdir -p /etc/docker
	cur='{}'
	[ -s /etc/docker/daemon.json ] && cur=$(cat /etc/docker/daemon.json)
	want=$(jq -S --arg n "$RUNTIME_NAME" --arg p "$WRAPPER" '.runtimes[$n] = {path: $p} | ."default-runtime" = $n' <<<"$cur") ||
		die "/etc/docker/daemon.json is not valid JSON; fix or remove it"
	if [ "$(jq -S . <<<"$cur")" != "$want" ]; then
		printf '%s\n' "$want" >/etc/docker/daemon.json
		changed=1
		log "made $RUNTIME_NAME Docker's default runtime in /etc/docker/daemon.json"
	fi
fi

docker_ok() { timeout 10 docker info >/dev/null 2>&1; }

if docker_ok && [ $changed = 1 ]; then
	log "restarting dockerd to load the new runtime configuration"
	if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker 2>/dev/null; then
		systemctl restart docker
	else
		pkill -TERM -x dockerd || true
		for _ in $(seq 1 30); do pgrep -x dockerd >/dev/null || break; sleep 1; done
	fi
fi
if ! docker_ok; then
	if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
		systemctl start docker || true
	fi
fi
if ! docker_ok; then
	log "starting dockerd (log: /var/log/skewproof-dockerd.log)"
	nohup dockerd >/var/log/skewproof-dockerd.log 2>&1 </dev/null &
	for _ in $(seq 1 60); do docker_ok && break; sleep 1; done
fi
docker_ok || die "dockerd did not come up; see /var/log/skewproof-dockerd.log"
# kind's known issue "Pod errors due to too many open files": every kind
# node's processes share root's inotify instances (clusters/capacity).
raise_sysctl() {
	local key=$1 want=$2 have
	have=$(sysctl -n "$key" 2>/dev/null) || { log "no $key here: left as it is"; return 0; }
	if [ "$have" -lt "$want" ]; then
		sysctl -qw "$key=$want" >/dev/null || die "could not raise $key from $have to $want"
		log "raised $key from $have to $want (kind's known issue \"too many open files\")"
	fi
}
raise_sysctl fs.inotify.max_user_instances 512
raise_sysctl fs.inotify.max_user_watches 524288
log "docker $(docker version --format '{{.Server.Version}}' 2>/dev/null) ready (default runtime: $(docker info --format '{{.DefaultRuntime}}' 2>/dev/null))"
