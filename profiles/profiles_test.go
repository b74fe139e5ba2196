package profiles

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

func TestSeccompProfilesAreValidJSON(t *testing.T) {
	ps := Seccomp()
	if len(ps) < 4 {
		t.Fatalf("want at least 4 profiles, got %d", len(ps))
	}
	for _, p := range ps {
		var v struct {
			DefaultAction string `json:"defaultAction"`
			Syscalls      []struct {
				Names  []string `json:"names"`
				Action string   `json:"action"`
			} `json:"syscalls"`
		}
		if err := json.Unmarshal(p.Content, &v); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if v.DefaultAction == "" || len(v.Syscalls) == 0 {
			t.Errorf("%s: want a defaultAction and syscall rules", p.Name)
		}
	}
	for _, n := range []string{DenyMkdir, DenyExecve, LogMkdir, InvalidAction} {
		if _, ok := SeccompByName(n); !ok {
			t.Errorf("profile %s missing", n)
		}
	}
	if _, ok := SeccompByName(Missing); ok {
		t.Errorf("%s must not exist: failure row 4 relies on it", Missing)
	}
	if DenyMkdir != skew.SeccompLocalhostProfile {
		t.Errorf("DenyMkdir = %q, oracle scenarios use %q", DenyMkdir, skew.SeccompLocalhostProfile)
	}
}

type fakeDocker struct {
	mu    sync.Mutex
	calls [][]string
	fail  string // node whose calls fail
}

func (f *fakeDocker) run(_ context.Context, args ...string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, args)
	if len(args) > 1 && args[1] == f.fail {
		return "", errors.New("no such container")
	}
	return "", nil
}

func TestInstallAll(t *testing.T) {
	fd := &fakeDocker{fail: "n2"}
	in := KindInstaller{Docker: fd.run}
	ps := Seccomp()
	rs := InstallAll(context.Background(), in, []string{"n2", "n1"}, ps)
	if len(rs) != 2*len(ps) {
		t.Fatalf("want %d results, got %d", 2*len(ps), len(rs))
	}
	if rs[0].Node != "n1" || rs[0].Err != nil {
		t.Errorf("first result %+v, want n1 without error", rs[0])
	}
	if err := FirstError(rs); err == nil || !strings.Contains(err.Error(), "node n2") {
		t.Errorf("FirstError = %v, want the n2 failure", err)
	}
	call := fd.calls[0]
	if call[0] != "exec" || !strings.HasPrefix(call[len(call)-2], "/var/lib/kubelet/seccomp/skewproof/") {
		t.Errorf("unexpected docker call %q", call)
	}
}

func TestNamesChecked(t *testing.T) {
	in := KindInstaller{Docker: (&fakeDocker{}).run}
	for _, n := range []string{"/etc/x.json", "../x.json", ""} {
		if err := in.Install(context.Background(), "n", Profile{Name: n}); err == nil {
			t.Errorf("Install(%q) accepted", n)
		}
	}
}
