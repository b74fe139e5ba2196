package nodeimage

import (
	"path/filepath"

	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/image"
)

const defaultStorageManifest = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
`

// nodeFiles is the layer of files added to the base image: kubeadm and
// kubectl of the control plane (from cpBin), the node's kubelet, the
// versions, kind's default storage class, the containerd configuration
// with the sandbox image pause, the closed registry hosts, and the
// restricted runtimes around the node's OCI runtime oci (with its binary,
// when the user provides it).
func nodeFiles(cpBin, kubeletPath, cp, kl, pause string, oci ociRuntime) *image.LayerBuilder {
	files := image.NewLayer().
		File("/usr/bin/kubeadm", filepath.Join(cpBin, "kubeadm"), 0o755).
		File("/usr/bin/kubectl", filepath.Join(cpBin, "kubectl"), 0o755).
		File("/usr/bin/kubelet", kubeletPath, 0o755).
		Data("/kind/version", []byte(cp+"\n"), 0o644).
		Data("/kind/skewproof-kubelet-version", []byte(kl+"\n"), 0o644).
		Data("/kind/manifests/default-storage.yaml", []byte(defaultStorageManifest), 0o644).
		Data("/etc/containerd/config.toml", []byte(containerdConfig(pause, oci)), 0o644).
		Data("/etc/containerd/certs.d/_default/hosts.toml", []byte(closedRegistryHosts), 0o644)
	for _, r := range restrictedRuntimes {
		files = files.Data(r.binary, []byte(r.script(oci.nodePath)), 0o755)
	}
	if oci.hostPath != "" {
		files = files.File(oci.nodePath, oci.hostPath, 0o755)
	}
	if oci.name != "" && oci.name != noderuntime.OCIRunc {
		files = files.Data(productFilesHookPath, []byte(productFilesHook), 0o755)
	}
	if needsCgroupBindsDropIn(kl) {
		files = files.Data(cgroupBindsDropInPath, []byte(cgroupBindsDropIn), 0o644)
	}
	return files
}
