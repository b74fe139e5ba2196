#!/usr/bin/env bash
# Measures the cold build of an additional Kubernetes version against the
# bare `go build` of the same binaries. Both start from an empty Go build
# cache and share the downloaded module cache; the skewproof run reuses the
# base image and the control plane's binaries (the version being measured is
# the only cold part), and includes resolving the wrapper module, building,
# and assembling the node image.
# Usage: hack/measure-build.sh KUBELET_VERSION [CONTROL_PLANE_VERSION]   (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
V=${1:?usage: $0 KUBELET_VERSION [CONTROL_PLANE_VERSION]}
CP=${2:-1.37.2}
MINOR=$(echo "$V" | cut -d. -f2)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
make -s build
BIN=$PWD/bin/skewproof
"$BIN" images build --kubernetes "$CP" >/dev/null 2>&1 # base and control plane warm

# Bare go build through the same kind of wrapper module.
W=$TMP/wrapper
mkdir -p "$W"
K=$(cd "$TMP" && go mod download -json "k8s.io/kubernetes@v$V" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
{
	printf 'module m\n\ngo 1.21\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$V"
	sed -n 's#^\s*\(k8s\.io/[^ ]*\) => \./staging/.*#\t\1 => \1 v0.'"$MINOR"'.'"${V##*.}"'#p' "$K/go.mod"
	printf ')\n'
} >"$W/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kubelet"\n' >"$W/tools.go"
(cd "$W" && GOFLAGS=-mod=mod GOWORK=off go mod tidy -e >/dev/null 2>&1)
LD="-s -w -X k8s.io/component-base/version.gitVersion=v$V"
# Wall time, and CPU time (user+sys of the command and its children), which
# does not depend on what else the machine is doing.
timed() { /usr/bin/time -f "%e %U %S" -o "$TMP/time" "$@"; read -r wall usr sys <"$TMP/time"; cpu=$(echo "$usr + $sys" | bc); }
if [ "${SKIP_BARE:-}" = 1 ]; then
	echo "bare go build skipped (SKIP_BARE=1)"
	bare=1 bare_cpu=1
else
timed env -C "$W" GOCACHE="$TMP/gocache-bare" CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off go build -trimpath -ldflags "$LD" -o "$TMP/kubelet" k8s.io/kubernetes/cmd/kubelet
bare=$wall bare_cpu=$cpu
echo "bare go build kubelet v$V (cold build cache): wall ${bare}s, cpu ${bare_cpu}s"
fi

# skewproof: a cache dir holding everything but this version's binaries.
C=$TMP/cache
mkdir -p "$C/bin"
OLD=${SKEWPROOF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skewproof}
for e in "$OLD"/base-* "$OLD"/served-*; do ln -s "$e" "$C/"; done
for e in "$OLD"/bin/*; do case "$e" in *kubernetes-v$V-*) ;; *) ln -s "$e" "$C/bin/" ;; esac; done
docker images --format '{{.Repository}}:{{.Tag}}' "skewproof-node" | { grep -- "-kubelet-v$V-" || true; } | xargs -r docker rmi >/dev/null
timed env SKEWPROOF_CACHE_DIR="$C" GOCACHE="$TMP/gocache-sp" "$BIN" images build --kubernetes "$CP" --kubelet "$V" 2>"$TMP/sp.log" >/dev/null
grep -E "go build|tidy|assembling" "$TMP/sp.log" || true
echo "skewproof images build --kubernetes $CP --kubelet $V (cold for v$V): wall ${wall}s, cpu ${cpu}s (docker daemon work not counted in cpu)"
echo "ratio wall: $(echo "scale=2; $wall / $bare" | bc), ratio cpu: $(echo "scale=2; $cpu / $bare_cpu" | bc)"
