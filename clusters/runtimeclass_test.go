package clusters

import (
	"context"
	"testing"

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
