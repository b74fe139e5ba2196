package nodeimage

import (
	"fmt"
	"path"
	"strings"

	"github.com/skewproof/skewproof/internal/nodefacts"
)

// restrictedRuntime is one of those handlers: its containerd runtime is
// binary, a wrapper around runc that deletes field (a jq path) from the
// bundle's config.json.
type restrictedRuntime struct {
	handler, binary, field, lacks string
}

var restrictedRuntimes = []restrictedRuntime{
	{handler: nodefacts.NoSeccompHandler, binary: "/usr/local/sbin/runc-no-seccomp", field: restrictedField(nodefacts.NoSeccompHandler), lacks: "seccomp"},
	{handler: nodefacts.NoAppArmorHandler, binary: "/usr/local/sbin/runc-no-apparmor", field: restrictedField(nodefacts.NoAppArmorHandler), lacks: "AppArmor"},
}

// restrictedField is the field the handler deletes: the one
// nodefacts.RestrictedHandlerField names, so that a staged result names
// what was staged (suites/internal/harness, RunUnderHandler).
func restrictedField(handler string) string {
	f, _ := nodefacts.RestrictedHandlerField(handler)
	return f
}

// nodeRunc is the runc of the node images.
const nodeRunc = "/usr/local/sbin/runc"

// script is the wrapper's text, around the node's OCI runtime at oci (the
// node's runc when empty).
func (r restrictedRuntime) script(oci string) string {
	if oci == "" {
		oci = nodeRunc
	}
	return fieldDroppingRuntime(r.field, r.lacks, oci)
}

// fieldDroppingRuntime is an OCI runtime that, on "create" and "run",
// deletes field from the bundle's config.json and then execs the OCI
// runtime at runc with the same arguments.
func fieldDroppingRuntime(field, lacks, runc string) string {
	return specEditingRuntime(path.Base(runc)+" without "+lacks+" support (deletes "+field+" from the OCI spec)", "del("+field+")", "", runc)
}

// specEditingRuntime is an OCI runtime, a bash script described by what,
// that edits the OCI spec with jq and then execs the OCI runtime at
// runtime with the same arguments: on "create" and "run" the bundle's
// config.json with createFilter, on "exec" the --process file with
// execFilter (nothing when ""). The filters may use $m (the capabilities
// outside the script's own bounding set), $min (its own oom_score_adj)
// and $v1 (whether the host has cgroup v1).
func specEditingRuntime(what, createFilter, execFilter, runtime string) string {
	execLine := ""
	if execFilter != "" {
		execLine = "exec) [ -n \"$process\" ] && [ -f \"$process\" ] && edit \"$process\" '" + execFilter + "' ;;\n"
	}
	return `#!/bin/bash
# written by skewproof: ` + what + `
caps=(` + strings.Join(CapNames, " ") + `)
bnd=$((16#$(awk '/^CapBnd:/{print $2}' /proc/self/status)))
missing=()
for ((i = 0; i < ${#caps[@]}; i++)); do
	(((bnd >> i) & 1)) || missing+=("\"${caps[$i]}\"")
done
m="[$(IFS=,; echo "${missing[*]}")]"
v1=false
[ -f /sys/fs/cgroup/cgroup.controllers ] || v1=true
edit() { # file filter
	jq --argjson m "$m" --argjson min "$(cat /proc/self/oom_score_adj)" --argjson v1 "$v1" "$2" "$1" >"$1.skewproof" && mv "$1.skewproof" "$1"
}
sub= bundle=. process=
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[$i]}" in
	--bundle | -b) bundle=${args[$((i + 1))]} ;;
	--bundle=*) bundle=${args[$i]#--bundle=} ;;
	--process | -p) process=${args[$((i + 1))]} ;;
	--process=*) process=${args[$i]#--process=} ;;
	create | run | exec) [ -z "$sub" ] && sub=${args[$i]} ;;
	esac
done
case "$sub" in
create | run) [ -f "$bundle/config.json" ] && edit "$bundle/config.json" '` + createFilter + `' ;;
` + execLine + `esac
exec ` + runtime + ` "$@"
`
}

// restrictedRuntimesConfig is the containerd configuration of the handlers.
func restrictedRuntimesConfig() string {
	var b strings.Builder
	for _, r := range restrictedRuntimes {
		t := `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.` + r.handler + `]`
		fmt.Fprintf(&b, "# A runtime without %s support: its runtime deletes %s from the OCI spec.\n", r.lacks, r.field)
		fmt.Fprintf(&b, "%s\n  runtime_type = \"io.containerd.runc.v2\"\n  base_runtime_spec = \"/etc/containerd/cri-base.json\"\n", t)
		fmt.Fprintf(&b, "  %s.options]\n    SystemdCgroup = true\n    BinaryName = %q\n\n", strings.TrimSuffix(t, "]"), r.binary)
	}
	return b.String()
}
