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
	files := saveNotReadyPodLogs(context.Background(), cs, dir)
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
	if got := saveNotReadyPodLogs(context.Background(), cs, ""); got != nil {
		t.Errorf("no artifacts directory: %v", got)
	}
}
