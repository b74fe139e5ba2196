package clusters

// containerdConfig is the node's containerd configuration: kind's, with
// restrict_oom_score_adj (the kubelet asks for -998 on every sandbox, which a
// host without CAP_SYS_RESOURCE cannot grant), the sandbox image that is
// preloaded, the restricted runtime handlers (restrictedRuntimes), and a
// registry configuration that sends every pull to a closed loopback port, so
// no pull can leave the node.
func containerdConfig(pause string) string {
	return `# written by skewproof
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "` + pause + `"
  tolerate_missing_hugepages_controller = true
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
