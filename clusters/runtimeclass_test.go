package clusters

import (
	"context"
	"testing"

	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/nodefacts"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestEnsureRestrictedRuntimeClassesCreatesOnlyMissingOnes(t *testing.T) {
	ctx := context.Background()
	existing := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: nodefacts.NoSeccompHandler}, Handler: nodefacts.NoSeccompHandler}
	cs := fake.NewSimpleClientset(existing)
	created, err := nodefacts.EnsureRestrictedRuntimeClasses(ctx, cs, map[string]string{"skewproof.io/run": "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 1 || created[0] != nodefacts.NoAppArmorHandler {
		t.Fatalf("created %v, want [%s]", created, nodefacts.NoAppArmorHandler)
	}
	rc, err := cs.NodeV1().RuntimeClasses().Get(ctx, nodefacts.NoAppArmorHandler, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Handler != nodefacts.NoAppArmorHandler || rc.Labels["skewproof.io/run"] != "r1" {
		t.Errorf("RuntimeClass %+v", rc)
	}
	if err := nodefacts.DeleteRuntimeClasses(ctx, cs, append(created, "never-created")); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NodeV1().RuntimeClasses().Get(ctx, nodefacts.NoSeccompHandler, metav1.GetOptions{}); err != nil {
		t.Errorf("the RuntimeClass that existed before was deleted: %v", err)
	}
	if _, err := cs.NodeV1().RuntimeClasses().Get(ctx, nodefacts.NoAppArmorHandler, metav1.GetOptions{}); err == nil {
		t.Error("the created RuntimeClass was not deleted")
	}
}

// A user's OCI runtime that a worker runs gets a RuntimeClass of its name,
// scheduled onto the nodes labelled with it; the node images' own do not.
func TestCreateOCIRuntimeClasses(t *testing.T) {
	cs := fake.NewSimpleClientset()
	o := UpOptions{Kubelets: []string{"1.37.2", "1.37.2", "1.36.3"},
		Runtimes:    []noderuntime.Runtime{{OCI: "crun"}, {OCI: "mine"}, {CRI: noderuntime.CRIContainerd2, OCI: "mine"}},
		OCIRuntimes: map[string]string{"mine": "/x/mine", "unused": "/x/unused"}}
	if err := createOCIRuntimeClasses(context.Background(), cs, o); err != nil {
		t.Fatal(err)
	}
	list, err := cs.NodeV1().RuntimeClasses().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("RuntimeClasses %+v, want one (mine)", list.Items)
	}
	rc := list.Items[0]
	if rc.Name != "mine" || rc.Handler != "mine" || rc.Scheduling == nil || rc.Scheduling.NodeSelector[nodefacts.OCIRuntimeLabel] != "mine" {
		t.Errorf("RuntimeClass %+v", rc)
	}
}
