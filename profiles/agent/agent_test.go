package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/api/apitest"
)

const ns = "skewproof-profiles"

func seccomp(name, content string) *api.SeccompProfile {
	return &api.SeccompProfile{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Generation: 1},
		Spec: api.SeccompProfileSpec{Content: content}}
}

func nodeStatuses(t *testing.T, dyn *dynfake.FakeDynamicClient) map[string]api.ProfileNodeStatus {
	t.Helper()
	l, err := dyn.Resource(api.ProfileNodeStatuses).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]api.ProfileNodeStatus{}
	for i := range l.Items {
		var s api.ProfileNodeStatus
		if err := api.FromUnstructured(&l.Items[i], &s); err != nil {
			t.Fatal(err)
		}
		out[s.Name] = s
	}
	return out
}

func newAgent(t *testing.T, dyn *dynfake.FakeDynamicClient, core *fake.Clientset, root string) *Agent {
	t.Helper()
	return startAgent(t, Config{Node: "w1", Namespace: ns, SeccompRoot: root, Dynamic: dyn, Core: core,
		AppArmorEnabledFile: filepath.Join(t.TempDir(), "absent")})
}

// startAgent makes an agent and starts its informers (stopped at the end
// of the test).
func startAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

// eventually waits until cond holds (the informers have caught up).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// profileGone waits until the agent's cache no longer has a profile.
func profileGone(t *testing.T, a *Agent, kind, name string) {
	t.Helper()
	eventually(t, kind+" "+name+" gone from the cache", func() bool {
		_, err := a.profiles[kind].Lister().ByNamespace(ns).Get(name)
		return err != nil
	})
}

// writes are the create/update/delete actions on node statuses since n.
func writes(dyn *dynfake.FakeDynamicClient, n int) []string {
	var out []string
	for _, act := range dyn.Actions()[n:] {
		switch act.GetVerb() {
		case "list", "watch", "get":
		default:
			out = append(out, act.GetVerb()+" "+act.GetResource().Resource)
		}
	}
	return out
}

func TestSeccompInstallAndRemove(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dyn := apitest.NewDynamic(t, seccomp("deny", `{"defaultAction":"SCMP_ACT_ALLOW"}`))
	core := fake.NewSimpleClientset()
	a := newAgent(t, dyn, core, root)
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "skewproof-profiles", ns, "deny.json")
	if b, err := os.ReadFile(file); err != nil || string(b) != `{"defaultAction":"SCMP_ACT_ALLOW"}` {
		t.Fatalf("file %s: %q %v", file, b, err)
	}
	st := nodeStatuses(t, dyn)["deny-w1"]
	if st.Status != api.Installed || st.NodeName != "w1" || st.Labels[api.LabelProfile] != "deny" ||
		len(st.OwnerReferences) != 1 || st.OwnerReferences[0].UID != "uid-deny" || st.OwnerReferences[0].Kind != api.KindSeccompProfile {
		t.Fatalf("status %+v", st)
	}
	// The writes went Pending (create) → Installing → Installed.
	var seq []string
	for _, act := range dyn.Actions() {
		if act.GetResource() != api.ProfileNodeStatuses {
			continue
		}
		if o, ok := act.(k8stesting.CreateAction); ok && (act.GetVerb() == "create" || act.GetVerb() == "update") {
			seq = append(seq, act.GetVerb()+":"+o.GetObject().(*unstructured.Unstructured).Object["status"].(string))
		}
	}
	if strings.Join(seq, ",") != "create:Pending,update:Installing,update:Installed" {
		t.Errorf("writes %v", seq)
	}
	evs, _ := core.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != ReasonInstalled || !strings.Contains(evs.Items[0].Message, "node w1") ||
		evs.Items[0].InvolvedObject.Name != "deny" || evs.Items[0].Source.Host != "w1" {
		t.Fatalf("events %+v", evs.Items)
	}
	// A second pass changes nothing, and reads from the cache only.
	n := len(dyn.Actions())
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, act := range dyn.Actions()[n:] {
		t.Errorf("idle pass did %s %s", act.GetVerb(), act.GetResource().Resource)
	}
	// The profile goes: its file goes.
	if err := dyn.Resource(api.SeccompProfiles).Namespace(ns).Delete(ctx, "deny", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	profileGone(t, a, api.KindSeccompProfile, "deny")
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("file still there: %v", err)
	}
	// With its last profile gone, the agent's directories go too (the
	// kubelet's seccomp root stays).
	if _, err := os.Stat(filepath.Dir(filepath.Dir(file))); !os.IsNotExist(err) {
		t.Errorf("%s still there after the last profile went: %v", filepath.Dir(filepath.Dir(file)), err)
	}
}

func TestSeccompFailureOnThisNodeAndRetry(t *testing.T) {
	// The fault: a file where the namespace directory must be (this works
	// as root too; the real-cluster spec makes the directory read-only for
	// the agent, which has no CAP_DAC_OVERRIDE).
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "skewproof-profiles", ns)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dyn := apitest.NewDynamic(t, seccomp("deny", `{}`))
	core := fake.NewSimpleClientset()
	a := newAgent(t, dyn, core, root)
	_ = a.Sync(ctx)
	st := nodeStatuses(t, dyn)["deny-w1"]
	if st.Status != api.Failed || !strings.Contains(st.Message, "not a directory") {
		t.Fatalf("status %+v", st)
	}
	evs, _ := core.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != ReasonFailed || !strings.HasPrefix(evs.Items[0].Message, "node w1: ") {
		t.Fatalf("events %+v", evs.Items)
	}
	// A retry that fails again writes nothing (no flapping through Installing).
	n := len(dyn.Actions())
	_ = a.Sync(ctx)
	if w := writes(dyn, n); len(w) > 0 {
		t.Errorf("failed retry did %v", w)
	}
	os.Remove(dir)
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st := nodeStatuses(t, dyn)["deny-w1"]; st.Status != api.Installed || st.Message != "" {
		t.Fatalf("after the fault: %+v", st)
	}
}

func TestInvalidContentFails(t *testing.T) {
	ctx := context.Background()
	dyn := apitest.NewDynamic(t, seccomp("bad", `{not json`))
	a := newAgent(t, dyn, fake.NewSimpleClientset(), t.TempDir())
	_ = a.Sync(ctx)
	if st := nodeStatuses(t, dyn)["bad-w1"]; st.Status != api.Failed || !strings.Contains(st.Message, "JSON") {
		t.Fatalf("status %+v", st)
	}
}

func TestAppArmorUnsupportedWithoutAppArmor(t *testing.T) {
	ctx := context.Background()
	ap := &api.AppArmorProfile{ObjectMeta: metav1.ObjectMeta{Name: "k8s-deny", Namespace: ns, UID: "uid-aa", Generation: 1},
		Spec: api.AppArmorProfileSpec{Policy: "profile k8s-deny {}"}}
	dyn := apitest.NewDynamic(t, ap)
	core := fake.NewSimpleClientset()
	a := newAgent(t, dyn, core, t.TempDir())
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st := nodeStatuses(t, dyn)["k8s-deny-w1"]
	if st.Status != api.Unsupported || !strings.Contains(st.Message, "no AppArmor") || st.ProfileKind != api.KindAppArmorProfile {
		t.Fatalf("status %+v", st)
	}
	evs, _ := core.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != ReasonUnsupported || evs.Items[0].Type != corev1.EventTypeWarning {
		t.Fatalf("events %+v", evs.Items)
	}
}

// A node whose AppArmor switch cannot be read is not a node without
// AppArmor: the profile is Failed with the error, never Unsupported (which
// would skip every AppArmor spec there as "host has no AppArmor").
func TestAppArmorUnreadableFails(t *testing.T) {
	ctx := context.Background()
	ap := &api.AppArmorProfile{ObjectMeta: metav1.ObjectMeta{Name: "k8s-deny", Namespace: ns, UID: "uid-aa", Generation: 1},
		Spec: api.AppArmorProfileSpec{Policy: "profile k8s-deny {}"}}
	dyn := apitest.NewDynamic(t, ap)
	// A directory: reading it fails (EISDIR), it is not absent.
	a := startAgent(t, Config{Node: "w1", Namespace: ns, SeccompRoot: t.TempDir(), Dynamic: dyn, Core: fake.NewSimpleClientset(),
		AppArmorEnabledFile: t.TempDir()})
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st := nodeStatuses(t, dyn)["k8s-deny-w1"]
	if st.Status != api.Failed || !strings.Contains(st.Message, "cannot tell whether the kernel has AppArmor") || strings.Contains(st.Message, "no AppArmor") {
		t.Fatalf("status %+v, want Failed with the read error", st)
	}
}

func TestAppArmorEnabled(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "enabled")
	if ok, why := AppArmorEnabled(f); ok || !strings.Contains(why, "absent") {
		t.Errorf("absent: %v %q", ok, why)
	}
	os.WriteFile(f, []byte("N\n"), 0o644)
	if ok, why := AppArmorEnabled(f); ok || !strings.Contains(why, "disabled") {
		t.Errorf("N: %v %q", ok, why)
	}
	os.WriteFile(f, []byte("Y\n"), 0o644)
	if ok, _ := AppArmorEnabled(f); !ok {
		t.Error("Y: not enabled")
	}
}

func TestOnlyOwnNodeStatusIsTouched(t *testing.T) {
	ctx := context.Background()
	p := seccomp("deny", `{}`)
	other := api.Profile{Kind: api.KindSeccompProfile, Namespace: ns, Name: "deny", UID: "uid-deny", Generation: 1}.
		NewNodeStatus("w2", api.Failed, "w2's own failure")
	dyn := apitest.NewDynamic(t, p, other)
	a := newAgent(t, dyn, fake.NewSimpleClientset(), t.TempDir())
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	all := nodeStatuses(t, dyn)
	if all["deny-w2"].Status != api.Failed || all["deny-w2"].Message != "w2's own failure" || all["deny-w1"].Status != api.Installed {
		t.Fatalf("statuses %+v", all)
	}
}

// Run is driven by the informers: a profile created after the start is
// installed, and removed once deleted, without any call to Sync (the
// resync is an hour, so only the watch events can have done it).
func TestRunFollowsWatchEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	dyn := apitest.NewDynamic(t)
	a, err := New(Config{Node: "w1", Namespace: ns, SeccompRoot: root, Dynamic: dyn, Core: fake.NewSimpleClientset(),
		AppArmorEnabledFile: filepath.Join(t.TempDir(), "absent"), Resync: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	stop := apitest.Background(t, cancel, func() error { return a.Run(ctx, func() { close(ready) }) })
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("not ready")
	}
	u, err := api.ToUnstructured(seccomp("late", `{"defaultAction":"SCMP_ACT_LOG"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(api.SeccompProfiles).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "skewproof-profiles", ns, "late.json")
	eventually(t, "the profile installed", func() bool {
		_, err := os.Stat(file)
		return err == nil && nodeStatusesNoFail(dyn)["late-w1"] == api.Installed
	})
	if err := dyn.Resource(api.SeccompProfiles).Namespace(ns).Delete(ctx, "late", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the file and the node status removed", func() bool {
		_, err := os.Stat(file)
		_, st := nodeStatusesNoFail(dyn)["late-w1"]
		return os.IsNotExist(err) && !st
	})
	stop()
}

func nodeStatusesNoFail(dyn *dynfake.FakeDynamicClient) map[string]api.Status {
	out := map[string]api.Status{}
	l, err := dyn.Resource(api.ProfileNodeStatuses).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return out
	}
	for i := range l.Items {
		var s api.ProfileNodeStatus
		if api.FromUnstructured(&l.Items[i], &s) == nil {
			out[s.Name] = s.Status
		}
	}
	return out
}
