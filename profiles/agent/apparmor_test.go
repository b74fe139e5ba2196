package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/api/apitest"
)

// fakeNode is a node with AppArmor enabled, as the agent sees it: an
// "enabled" file saying Y, a securityfs "profiles" file, and a fake
// apparmor_parser that logs its calls and, like the real one, adds or
// removes the profile its input defines in that file. Input containing
// SYNTAX-ERROR makes it fail as the real parser does on bad policy.
type fakeNode struct {
	dir, enabled, fs, parser, calls string
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	dir := t.TempDir()
	n := &fakeNode{dir: dir, enabled: filepath.Join(dir, "enabled"), fs: filepath.Join(dir, "securityfs"),
		parser: filepath.Join(dir, "apparmor_parser"), calls: filepath.Join(dir, "calls")}
	if err := os.WriteFile(n.enabled, []byte("Y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(n.fs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(n.fs, "profiles"), []byte("cri-containerd.apparmor.d (enforce)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
in=$(cat)
printf '%%s|%%s\n' "$*" "$(printf '%%s' "$in" | tr '\n' ' ')" >> %[1]q
case "$in" in *SYNTAX-ERROR*)
	echo "AppArmor parser error for /dev/stdin in profile /dev/stdin at line 1: syntax error, unexpected TOK_ID" >&2; exit 1;;
esac
name=$(printf '%%s\n' "$in" | sed -n 's/^profile \([^ {]*\).*/\1/p' | head -n 1)
grep -v "^$name (" %[2]q > %[2]q.new
[ "$1" = --replace ] && echo "$name (enforce)" >> %[2]q.new
mv %[2]q.new %[2]q
`, n.calls, filepath.Join(n.fs, "profiles"))
	if err := os.WriteFile(n.parser, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *fakeNode) config(dyn any, root string) Config {
	return Config{Node: "w1", Namespace: ns, SeccompRoot: root, AppArmorEnabledFile: n.enabled, AppArmorFS: n.fs, AppArmorParser: n.parser}
}

func (n *fakeNode) callLog(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(n.calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func (n *fakeNode) loaded(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.fs, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func apparmor(name, policy string) *api.AppArmorProfile {
	return &api.AppArmorProfile{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Generation: 1},
		Spec: api.AppArmorProfileSpec{Policy: policy}}
}

const denyWrite = "profile k8s-deny-write flags=(attach_disconnected) {\n  file,\n  deny /** w,\n}"

func TestAppArmorLoadInstalledThenUnloadOnDelete(t *testing.T) {
	ctx := context.Background()
	node := newFakeNode(t)
	dyn := apitest.NewDynamic(t, apparmor("k8s-deny-write", denyWrite))
	core := fake.NewSimpleClientset()
	cfg := node.config(nil, t.TempDir())
	cfg.Dynamic, cfg.Core = dyn, core
	a := startAgent(t, cfg)
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st := nodeStatuses(t, dyn)["k8s-deny-write-w1"]
	if st.Status != api.Installed || st.Message != "" {
		t.Fatalf("status %+v", st)
	}
	calls := node.callLog(t)
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "--replace --skip-cache|profile k8s-deny-write ") || !strings.Contains(calls[0], "deny /** w,") {
		t.Fatalf("parser calls %q: want one --replace with the policy on stdin", calls)
	}
	if !strings.Contains(node.loaded(t), "k8s-deny-write (enforce)") {
		t.Fatalf("not loaded: %q", node.loaded(t))
	}
	evs, _ := core.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != ReasonInstalled {
		t.Fatalf("events %+v", evs.Items)
	}
	// Idle: nothing reloaded.
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(node.callLog(t)); n != 1 {
		t.Fatalf("idle pass ran the parser: %q", node.callLog(t))
	}
	// The kernel lost it (e.g. the node rebooted): loaded again.
	os.WriteFile(filepath.Join(node.fs, "profiles"), nil, 0o644)
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if calls := node.callLog(t); len(calls) != 2 || !strings.HasPrefix(calls[1], "--replace") || !strings.Contains(node.loaded(t), "k8s-deny-write (enforce)") {
		t.Fatalf("not reloaded: %q %q", calls, node.loaded(t))
	}
	// Deleted: unloaded with the same text, and this node's status removed.
	if err := dyn.Resource(api.AppArmorProfiles).Namespace(ns).Delete(ctx, "k8s-deny-write", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	profileGone(t, a, api.KindAppArmorProfile, "k8s-deny-write")
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	calls = node.callLog(t)
	if last := calls[len(calls)-1]; !strings.HasPrefix(last, "--remove --skip-cache|profile k8s-deny-write ") {
		t.Fatalf("parser calls %q: want --remove with the loaded text", calls)
	}
	if strings.Contains(node.loaded(t), "k8s-deny-write") {
		t.Fatalf("still loaded: %q", node.loaded(t))
	}
	if _, ok := nodeStatuses(t, dyn)["k8s-deny-write-w1"]; ok {
		t.Error("the node status of the deleted profile is still there")
	}
	if recs, _ := a.appArmorRecords(); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

func TestAppArmorParserErrorFails(t *testing.T) {
	ctx := context.Background()
	node := newFakeNode(t)
	dyn := apitest.NewDynamic(t, apparmor("bad", "profile bad { SYNTAX-ERROR }"))
	core := fake.NewSimpleClientset()
	cfg := node.config(nil, t.TempDir())
	cfg.Dynamic, cfg.Core = dyn, core
	a := startAgent(t, cfg)
	_ = a.Sync(ctx)
	st := nodeStatuses(t, dyn)["bad-w1"]
	if st.Status != api.Failed || !strings.Contains(st.Message, "apparmor_parser --replace: AppArmor parser error") || !strings.Contains(st.Message, "syntax error") {
		t.Fatalf("status %+v: want Failed with the parser's message", st)
	}
	evs, _ := core.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != ReasonFailed || !strings.Contains(evs.Items[0].Message, "node w1: apparmor_parser") {
		t.Fatalf("events %+v", evs.Items)
	}
}

func TestAppArmorMustDefineTheNamedProfile(t *testing.T) {
	ctx := context.Background()
	node := newFakeNode(t)
	dyn := apitest.NewDynamic(t, apparmor("named", "profile other {\n}"))
	cfg := node.config(nil, t.TempDir())
	cfg.Dynamic = dyn
	a := startAgent(t, cfg)
	_ = a.Sync(ctx)
	if st := nodeStatuses(t, dyn)["named-w1"]; st.Status != api.Failed || !strings.Contains(st.Message, `no profile "named"`) {
		t.Fatalf("status %+v: a successful parser run that loads no profile of that name is a failure", st)
	}
}

// A profile deleted while the agent was not running is unloaded at the
// next start, from the recorded text.
func TestAppArmorUnloadAfterRestart(t *testing.T) {
	ctx := context.Background()
	node := newFakeNode(t)
	root := t.TempDir()
	dyn := apitest.NewDynamic(t, apparmor("k8s-deny-write", denyWrite))
	cfg := node.config(nil, root)
	cfg.Dynamic = dyn
	a := startAgent(t, cfg)
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	dyn2 := apitest.NewDynamic(t) // the profile is gone; a new agent starts
	cfg.Dynamic = dyn2
	b := startAgent(t, cfg)
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	calls := node.callLog(t)
	if len(calls) != 2 || !strings.HasPrefix(calls[1], "--remove --skip-cache|profile k8s-deny-write") || strings.Contains(node.loaded(t), "k8s-deny-write") {
		t.Fatalf("calls %q, loaded %q", calls, node.loaded(t))
	}
}

func TestAppArmorWithoutParserOrPrivileges(t *testing.T) {
	ctx := context.Background()
	node := newFakeNode(t)
	for _, c := range []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"no parser", func(c *Config) { c.AppArmorParser = filepath.Join(node.dir, "absent") }, "apparmor_parser is not in the agent image"},
		{"seccomp only", func(c *Config) { c.NoAppArmorLoad = true }, "without the privileges to load AppArmor profiles"},
		{"no securityfs", func(c *Config) { c.AppArmorFS = filepath.Join(node.dir, "no-securityfs") }, "securityfs directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dyn := apitest.NewDynamic(t, apparmor("p", "profile p {\n}"))
			cfg := node.config(nil, t.TempDir())
			cfg.Dynamic = dyn
			c.cfg(&cfg)
			a := startAgent(t, cfg)
			_ = a.Sync(ctx)
			if st := nodeStatuses(t, dyn)["p-w1"]; st.Status != api.Failed || !strings.Contains(st.Message, c.want) {
				t.Fatalf("status %+v", st)
			}
		})
	}
	if len(node.callLog(t)) != 0 {
		t.Errorf("the parser ran: %q", node.callLog(t))
	}
}
