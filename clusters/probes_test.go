package clusters

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/skewproof/skewproof/internal/cachedir"
)

// Each patch is a Pod whose one container is named as its file's target
// (kubeadm's strategic merge matches containers by name; a wrong name would
// add a container instead of changing the probe).
func TestKubeadmPatches(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	dir, err := writeKubeadmPatches()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		b, err := os.ReadFile(filepath.Join(dir, c+"+strategic.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var pod corev1.Pod
		if err := yaml.UnmarshalStrict(b, &pod); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Name != c {
			t.Fatalf("%s: containers %+v", c, pod.Spec.Containers)
		}
		p := pod.Spec.Containers[0].StartupProbe
		if p == nil || p.PeriodSeconds != 1 || p.InitialDelaySeconds != 0 || p.FailureThreshold*p.PeriodSeconds != 240 {
			t.Errorf("%s: startup probe %+v", c, p)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%s holds %d files, want the 4 patches only", dir, len(entries))
	}
	if m := kubeadmPatchesMount(dir); m.HostPath != dir || m.ContainerPath != kubeadmPatchesDir || !m.Readonly {
		t.Errorf("mount %+v", m)
	}
	// Written again over itself (every cluster up does): still 4 files.
	if _, err := writeKubeadmPatches(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("after a second write: %d files", len(entries))
	}
}
