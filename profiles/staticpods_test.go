package profiles

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/api/apitest"
)

// PutStaticPod and DeleteStaticPod against a real agent of node w1 on fake
// clients, its static pod directory a temporary one.
func TestPutAndDeleteStaticPodThroughTheAgent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = FixturesNamespace
	dyn := apitest.NewDynamic(t)
	// The fake client sets no UID; the API server sets a new one on every
	// create, which is how a replaced StaticPod's status is told apart.
	uids := 0
	dyn.PrependReactor("create", "staticpods", func(act k8stesting.Action) (bool, runtime.Object, error) {
		uids++
		act.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).SetUID(types.UID(fmt.Sprintf("uid-%d", uids)))
		return false, nil, nil
	})
	core := fake.NewSimpleClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-w1", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": agent.AgentName}},
		Spec:       corev1.PodSpec{NodeName: "w1"},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: "Ready", Status: "True"}}},
	})
	c := &Cluster{Core: core, Dynamic: dyn, Namespace: ns}
	if err := c.AgentReadyOn(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := c.AgentReadyOn(ctx, "w2"); err == nil || !strings.Contains(err.Error(), "no skewproof-agent pod on node w2") {
		t.Fatalf("AgentReadyOn(w2) = %v", err)
	}
	dir := t.TempDir()
	a, err := agent.New(agent.Config{Node: "w1", Namespace: ns, SeccompRoot: t.TempDir(), Dynamic: dyn, Core: core,
		AppArmorEnabledFile: filepath.Join(t.TempDir(), "absent"), StaticPodDir: dir, StaticPodPath: "/etc/kubernetes/manifests",
		Resync: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx, nil) }()
	defer func() { cancel(); <-done }()

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static", Namespace: "apparmor-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	st, err := c.PutStaticPod(ctx, "static-apparmor-1", "w1", pod, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	file := api.StaticPodFile(ns, "static-apparmor-1")
	if st.Status != api.Installed || st.Message != "/etc/kubernetes/manifests/"+file {
		t.Fatalf("status %+v", st)
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil || !strings.Contains(string(b), "name: static\n") {
		t.Fatalf("manifest %q %v", b, err)
	}
	// Put again: replaced, reported for the new object.
	pod.Name = "static2"
	if st, err = c.PutStaticPod(ctx, "static-apparmor-1", "w1", pod, 10*time.Second); err != nil || st.Status != api.Installed {
		t.Fatalf("replacing: %+v %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, file)); !strings.Contains(string(b), "name: static2\n") {
		t.Fatalf("replaced manifest %q", b)
	}
	if err := c.DeleteStaticPod(ctx, "static-apparmor-1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, file)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not remove the manifest of the deleted StaticPod")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.DeleteStaticPod(ctx, "static-apparmor-1"); err != nil {
		t.Errorf("deleting again: %v", err)
	}
	// An agent that cannot write it: the error carries its reason.
	pod.Name = ""
	if _, err := c.PutStaticPod(ctx, "nameless", "w1", pod, 10*time.Second); err == nil || !strings.Contains(err.Error(), "no metadata.name") {
		t.Errorf("nameless pod: %v", err)
	}
}
