package clusters

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A cluster that did not come up keeps the logs of its kube-system pods
// that are not ready (the previous run of a restarted container); the ready
// ones are left out.
func TestSaveNotReadyPodLogs(t *testing.T) {
	ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "etcd", Ready: true}}}
	crashing := corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "kube-proxy", RestartCount: 4,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}
	cs := fake.NewSimpleClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-cp", Namespace: "kube-system"}, Status: ready},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-abc", Namespace: "kube-system"}, Spec: corev1.PodSpec{NodeName: "w-uml-worker"}, Status: crashing},
	)
	dir := filepath.Join(t.TempDir(), "artifacts")
	files, cause := saveNotReadyPodLogs(context.Background(), cs, dir)
	if cause != "" {
		t.Errorf("cause %q in the fake logs", cause)
	}
	if len(files) != 1 || filepath.Base(files[0]) != "bringup-kube-proxy-abc-kube-proxy.log" {
		t.Fatalf("files %v; want the one of kube-proxy-abc", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pod kube-system/kube-proxy-abc on node w-uml-worker, container kube-proxy, 4 restarts, previous run true", "fake logs"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("log file %q lacks %q", b, want)
		}
	}
	if got, _ := saveNotReadyPodLogs(context.Background(), cs, ""); got != nil {
		t.Errorf("no artifacts directory: %v", got)
	}
}

// kube-proxy's exit when the host's inotify instances ran out (as v1.30's
// logged it in a history run) names the cause and the remedy; other logs
// name none.
func TestKnownBringupCause(t *testing.T) {
	log := `E1128 11:52:47.178935       1 run.go:74] "command failed" err="failed complete: too many open files"`
	c := knownBringupCause("kube-proxy-4f8pz", "kube-proxy", log)
	for _, want := range []string{"kube-proxy-4f8pz/kube-proxy", "inotify instances ran out", "sysctl -w fs.inotify.max_user_instances=512"} {
		if !strings.Contains(c, want) {
			t.Errorf("cause %q lacks %q", c, want)
		}
	}
	if c := knownBringupCause("etcd-cp", "etcd", "fake logs"); c != "" {
		t.Errorf("cause %q of an unknown log", c)
	}
}
