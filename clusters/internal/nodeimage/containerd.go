package nodeimage

import (
	"strconv"
	"strings"

	"github.com/skewproof/skewproof/clusters/noderuntime"
)

// containerdConfig is the node's containerd configuration: kind's, with
// restrict_oom_score_adj (the kubelet asks for -998 on every sandbox, which a
// host without CAP_SYS_RESOURCE cannot grant), the sandbox image that is
// preloaded, the restricted runtime handlers (restrictedRuntimes), and a
// registry configuration that sends every pull to a closed loopback port, so
// no pull can leave the node. oci is the node's OCI runtime: the default
// handler (runc) runs it, and so does a handler of its name (for a
// RuntimeClass that names it), when it is not runc.
func containerdConfig(pause string, oci ociRuntime) string {
	return `# written by skewproof
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "` + pause + `"
  tolerate_missing_hugetlb_controller = true
  restrict_oom_score_adj = true

[plugins."io.containerd.grpc.v1.cri".containerd]
  discard_unpacked_layers = true
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true
` + ociHandlers(oci) + `

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler.options]
    SystemdCgroup = true

` + restrictedRuntimesConfig() + `[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/opt/cni/bin"
  conf_dir = "/etc/cni/net.d"

[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`
}

// closedRegistryHosts makes every registry resolve to a closed loopback port.
const closedRegistryHosts = `# written by skewproof: images are preloaded; no pull may leave the node
server = "http://127.0.0.1:1"

[host."http://127.0.0.1:1"]
  capabilities = ["pull", "resolve"]
`

// ociHandlers points the default handler at oci's binary and adds a handler
// of oci's name, unless oci is runc (the shim's default binary).
func ociHandlers(oci ociRuntime) string {
	if oci.name == "" || oci.name == noderuntime.OCIRunc {
		return ""
	}
	t := `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.` + oci.name + `]`
	return "    BinaryName = " + strconv.Quote(oci.nodePath) + "\n\n" +
		"# The node's OCI runtime, " + oci.name + ", also under its own name.\n" +
		t + "\n  runtime_type = \"io.containerd.runc.v2\"\n  base_runtime_spec = \"/etc/containerd/cri-base.json\"\n" +
		"  " + strings.TrimSuffix(t, "]") + ".options]\n    SystemdCgroup = true\n    BinaryName = " + strconv.Quote(oci.nodePath) + "\n"
}
