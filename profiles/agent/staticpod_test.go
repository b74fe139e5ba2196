package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/api/apitest"
)

func staticPod(t *testing.T, name, node string) *api.StaticPod {
	t.Helper()
	sp, err := api.StaticPodObject(ns, name, node, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static", Namespace: "apparmor-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}})
	if err != nil {
		t.Fatal(err)
	}
	sp.UID, sp.Generation = types.UID("uid-"+name), 1
	return sp
}

// staticPodAgent is an agent of node w1 whose static pod directory is a
// temporary directory, which it reports as /etc/kubernetes/manifests.
func staticPodAgent(t *testing.T, dyn *dynfake.FakeDynamicClient, core *fake.Clientset) (*Agent, string) {
	t.Helper()
	dir := t.TempDir()
	return startAgent(t, Config{Node: "w1", Namespace: ns, SeccompRoot: t.TempDir(), Dynamic: dyn, Core: core,
		AppArmorEnabledFile: filepath.Join(t.TempDir(), "absent"),
		StaticPodDir:        dir, StaticPodPath: "/etc/kubernetes/manifests"}), dir
}

func TestStaticPodWrittenOnItsNodeOnlyAndRemoved(t *testing.T) {
	ctx := context.Background()
	mine, other := staticPod(t, "static-a", "w1"), staticPod(t, "static-b", "w2")
	dyn := apitest.NewDynamic(t, mine, other)
	core := fake.NewSimpleClientset()
	a, dir := staticPodAgent(t, dyn, core)
	// Files that are not this agent's are never touched.
	foreign := []string{"kube-apiserver.yaml", "skewproof.other-ns.static-x.yaml", "skewproof-profiles.yaml"}
	for _, f := range foreign {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "skewproof."+ns+".static-a.yaml")
	b, err := os.ReadFile(file)
	if err != nil || string(b) != mine.Spec.Manifest {
		t.Fatalf("manifest %s: %q %v", file, b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "skewproof."+ns+".static-b.yaml")); !os.IsNotExist(err) {
		t.Errorf("the manifest of another node's StaticPod was written here: %v", err)
	}
	sts := nodeStatuses(t, dyn)
	st := sts["static-a-w1"]
	if st.Status != api.Installed || st.ProfileKind != api.KindStaticPod || st.NodeName != "w1" ||
		st.Message != "/etc/kubernetes/manifests/skewproof."+ns+".static-a.yaml" || st.OwnerReferences[0].UID != "uid-static-a" ||
		st.OwnerReferences[0].Kind != api.KindStaticPod || st.Labels[api.LabelKind] != api.KindStaticPod {
		t.Fatalf("status %+v", st)
	}
	if len(sts) != 1 {
		t.Errorf("statuses %v: want this node's of its own StaticPod only", sts)
	}
	evs, _ := core.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != ReasonStaticPodWritten || evs.Items[0].InvolvedObject.Kind != api.KindStaticPod ||
		!strings.Contains(evs.Items[0].Message, "node w1: wrote /etc/kubernetes/manifests/") {
		t.Fatalf("events %+v", evs.Items)
	}
	// Idle pass: nothing written.
	n := len(dyn.Actions())
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if w := writes(dyn, n); len(w) > 0 {
		t.Errorf("idle pass did %v", w)
	}
	// The file changed on the node: written again on the next pass.
	if err := os.WriteFile(file, []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != mine.Spec.Manifest {
		t.Errorf("a changed manifest was not restored: %q", b)
	}
	// The object goes: its file goes.
	if err := dyn.Resource(api.StaticPods).Namespace(ns).Delete(ctx, "static-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	profileGone(t, a, api.KindStaticPod, "static-a")
	if err := a.syncKey(ctx, api.KindStaticPod+"/static-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("manifest still there: %v", err)
	}
	for _, f := range foreign {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// At start-up (the first Sync) the manifests and temporary files of this
// namespace whose StaticPods are gone are swept; the rest stays.
func TestStaticPodSweepAtStart(t *testing.T) {
	ctx := context.Background()
	dyn := apitest.NewDynamic(t, staticPod(t, "kept", "w1"), staticPod(t, "elsewhere", "w2"))
	a, dir := staticPodAgent(t, dyn, fake.NewSimpleClientset())
	left := map[string]bool{
		"skewproof." + ns + ".gone.yaml":          false, // deleted while the agent was down
		"skewproof." + ns + ".elsewhere.yaml":     false, // another node's
		".skewproof." + ns + ".kept.yaml.tmp-123": false, // an interrupted write
		"skewproof." + ns + ".kept.yaml":          true,  // rewritten
		"skewproof." + ns + "x.gone.yaml":         true,  // another namespace's prefix
		"skewproof." + ns + "-other.gone.yaml":    true,  // another namespace's
		"etcd.yaml":                               true,
		".skewproof.other.kept.yaml.tmp-1":        true,
	}
	for f := range left {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for f, stays := range left {
		_, err := os.Stat(filepath.Join(dir, f))
		if stays != (err == nil) {
			t.Errorf("%s: stays %v, stat %v", f, stays, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "skewproof."+ns+".kept.yaml")); string(b) == "old" {
		t.Error("the kept manifest was not rewritten")
	}
}

func TestStaticPodFailures(t *testing.T) {
	ctx := context.Background()
	bad := staticPod(t, "bad", "w1")
	bad.Spec.Manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
	dyn := apitest.NewDynamic(t, bad, staticPod(t, "good", "w1"))
	core := fake.NewSimpleClientset()
	a, _ := staticPodAgent(t, dyn, core)
	_ = a.Sync(ctx)
	sts := nodeStatuses(t, dyn)
	if st := sts["bad-w1"]; st.Status != api.Failed || !strings.Contains(st.Message, "want a v1 Pod") {
		t.Errorf("invalid manifest: %+v", st)
	}
	if st := sts["good-w1"]; st.Status != api.Installed {
		t.Errorf("valid manifest beside an invalid one: %+v", st)
	}

	// An agent deployed without the static pod directory says so.
	dyn = apitest.NewDynamic(t, staticPod(t, "good", "w1"))
	a = startAgent(t, Config{Node: "w1", Namespace: ns, SeccompRoot: t.TempDir(), Dynamic: dyn, Core: fake.NewSimpleClientset(),
		AppArmorEnabledFile: filepath.Join(t.TempDir(), "absent")})
	_ = a.Sync(ctx)
	if st := nodeStatuses(t, dyn)["good-w1"]; st.Status != api.Failed || !strings.Contains(st.Message, "without the node's static pod directory") {
		t.Errorf("no static pod directory: %+v", st)
	}
}
