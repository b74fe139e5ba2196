package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/skew/served"
)

// simulate runs 'skewproof simulate args' with a served-versions cache of
// its own (no network) and returns what it printed and its error.
func simulate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	t.Setenv(cachedir.Env, t.TempDir())
	path, err := served.CachePath()
	if err != nil {
		t.Fatal(err)
	}
	if err := served.WriteCache(path, []string{"v1.34.4", "v1.37.2"}, "test"); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	c := NewSimulateCmd(func() io.Writer { return &out })
	c.SetArgs(args)
	c.SetErr(&errOut)
	c.SilenceUsage, c.SilenceErrors = true, true
	err = c.Execute()
	return out.String(), err
}

func TestSimulateRuntime(t *testing.T) {
	for _, c := range []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{args: []string{"--apiserver", "1.37.2", "--format", "markdown", "--runtime", "cri-o/1.34.0+crun/1.21"},
			want: []string{"Reproduce with `skewproof simulate --apiserver 1.37.2 --kubelet 1.37.2 --runtime cri-o/1.34.0+crun/1.21 --format markdown`",
				"crio-default (enforce)", "fails with ENOSYS", "CRI-O fails the create", "- `apparmor/failure/row-3`"},
			notWant: []string{"Runtime not researched", "cri-containerd.apparmor.d"}},
		{args: []string{"--apiserver", "1.37.2", "--runtime", "containerd/2.4.2+crun"},
			want:    []string{"cri-containerd.apparmor.d (enforce)"},
			notWant: []string{"runtime not researched"}},
		{args: []string{"--apiserver", "1.37.2", "--runtime", "containerd/2.4.2+kata-runtime"},
			want: []string{"runtime not researched seccomp/kubelet/enforce: runtime containerd v2.4.2 with kata-runtime not researched"}},
		{args: []string{"--upgrade", "1.34.4", "1.37.2", "--format", "markdown", "--runtime", "cri-o"},
			want: []string{"--runtime cri-o --format markdown"}},
	} {
		out, err := simulate(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%v: output has %q:\n%s", c.args, w, out)
			}
		}
	}
}

func TestSimulateRuntimeBadInput(t *testing.T) {
	for _, rt := range []string{"", "containerd/latest", "containerd+", "+runc"} {
		_, err := simulate(t, "--apiserver", "1.37.2", "--runtime", rt)
		var ue UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(ue.Msg, "--runtime: runtime ") {
			t.Errorf("--runtime %q: %v, want a usage error about --runtime", rt, err)
		}
	}
}
