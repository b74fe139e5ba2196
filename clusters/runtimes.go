package clusters

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
	{handler: nodefacts.NoSeccompHandler, binary: "/usr/local/sbin/runc-no-seccomp", field: ".linux.seccomp", lacks: "seccomp"},
	{handler: nodefacts.NoAppArmorHandler, binary: "/usr/local/sbin/runc-no-apparmor", field: ".process.apparmorProfile", lacks: "AppArmor"},
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
	return `#!/bin/sh
# written by skewproof: ` + path.Base(runc) + ` without ` + lacks + ` support (deletes ` + field + ` from the OCI spec)
bundle=.
sub=
prev=
for a in "$@"; do
	case "$prev" in --bundle|-b) bundle=$a ;; esac
	case "$a" in --bundle=*) bundle=${a#--bundle=} ;; create|run) [ -z "$sub" ] && sub=$a ;; esac
	prev=$a
done
if [ -n "$sub" ] && [ -f "$bundle/config.json" ]; then
	jq 'del(` + field + `)' "$bundle/config.json" > "$bundle/config.json.skewproof" && mv "$bundle/config.json.skewproof" "$bundle/config.json"
fi
exec ` + runc + ` "$@"
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
