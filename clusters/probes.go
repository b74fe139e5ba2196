package clusters

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/google/renameio/v2"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// The control plane's static pods (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler) are ready only once their
// startup probe has passed. kubeadm gives each an HTTP startup probe with
// initialDelaySeconds 10, periodSeconds 10 and failureThreshold 24
// (cmd/kubeadm/app/util/staticpod/utils.go, StartupProbe), and a kubelet
// that started less than a period ago sleeps a random part of the period
// before a probe's first tick (pkg/kubelet/prober/worker.go, run). So the
// pods turned ready 10 to 20 s after they started, whenever the components
// themselves were serving: the last 8-13 s of a `cluster up` went on
// waiting for those probes after the workers had joined.
//
// controlPlaneProbePatches probe from the start every second with the same
// 240 s budget (240 failures of 1 s instead of 24 of 10 s): a component is
// ready within about a second of answering its health endpoint. The
// endpoints, ports and timeouts are kubeadm's; readiness and liveness
// probes are untouched. They are kubeadm patches (InitConfiguration
// patches.directory, strategic merge by container name), mounted into the
// control-plane node, so they apply to any node image.
var controlPlaneProbePatches = func() map[string]string {
	m := map[string]string{}
	for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		m[c+"+strategic.yaml"] = fmt.Sprintf(`spec:
  containers:
  - name: %s
    startupProbe:
      initialDelaySeconds: 0
      periodSeconds: 1
      failureThreshold: 240
`, c)
	}
	return m
}()

// kubeadmPatchesDir is where the control-plane node sees the patches.
const kubeadmPatchesDir = "/etc/skewproof/kubeadm-patches"

// kubeadmPatchesConfig points kubeadm init at kubeadmPatchesDir.
const kubeadmPatchesConfig = "kind: InitConfiguration\npatches:\n  directory: " + kubeadmPatchesDir + "\n"

// writeKubeadmPatches writes controlPlaneProbePatches into the cache
// directory and returns the directory.
func writeKubeadmPatches() (string, error) {
	var dir string
	for name, body := range controlPlaneProbePatches {
		path, err := writeCacheFile(filepath.Join("kubeadm-patches", name), body)
		if err != nil {
			return "", err
		}
		dir = filepath.Dir(path)
	}
	return dir, nil
}

// writeCacheFile writes a file the nodes mount (name, relative to the cache
// directory) and returns its path. The file is replaced atomically, so a
// cluster coming up at the same time never reads a partial file.
func writeCacheFile(name, content string) (string, error) {
	cache, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	path := filepath.Join(cache, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := renameio.WriteFile(path, []byte(content), 0o644, renameio.WithTempDir(filepath.Dir(path)), renameio.IgnoreUmask()); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// kubeadmPatchesMount mounts the patches read-only into a control-plane node.
func kubeadmPatchesMount(dir string) v1alpha4.Mount {
	return v1alpha4.Mount{HostPath: dir, ContainerPath: kubeadmPatchesDir, Readonly: true}
}
