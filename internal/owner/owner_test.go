package owner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestAlive(t *testing.T) {
	self := Token()
	if !Alive(self) || PID(self) != os.Getpid() {
		t.Fatalf("own token %q: alive %v, pid %d", self, Alive(self), PID(self))
	}
	// PID 1 exists, but not with this start time: a recycled PID is not the owner.
	recycled := fmt.Sprintf("1.%d", startTime(1)+12345)
	for _, dead := range []string{"999999999.1", recycled} {
		if Alive(dead) {
			t.Errorf("Alive(%q) = true, want false", dead)
		}
	}
	// Not a token: nothing is removed on a guess.
	for _, s := range []string{"", "abc", "12", "x.y"} {
		if !Alive(s) {
			t.Errorf("Alive(%q) = false for a string that is not a token", s)
		}
	}
}

func TestSweepDir(t *testing.T) {
	dir := t.TempDir()
	names := map[string]bool{ // name -> must remain
		".node-build-999999999.1-abc":   false,
		".node-build-" + Token() + "-x": true,
		".node-build-old-style-123":     true,
		"other-999999999.1-x":           true,
	}
	for n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removed := SweepDir(dir, ".node-build-")
	if len(removed) != 1 {
		t.Errorf("removed %v, want only the dead process's directory", removed)
	}
	for n, keep := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if keep != (err == nil) {
			t.Errorf("%s: present %v, want %v", n, err == nil, keep)
		}
	}
}

func TestTempRoot(t *testing.T) {
	parent := t.TempDir()
	t.Setenv("TMPDIR", parent)
	dead := filepath.Join(parent, TempPrefix+"999999999.1-tmp")
	if err := os.MkdirAll(filepath.Join(dead, "go-build1"), 0o755); err != nil {
		t.Fatal(err)
	}
	remove, err := TempRoot()
	if err != nil {
		t.Fatal(err)
	}
	root := os.TempDir()
	if filepath.Dir(root) != parent || root == parent {
		t.Fatalf("TMPDIR is %s, want a directory of this process under %s", root, parent)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a killed process's temporary directory is still there")
	}
	if _, err := os.MkdirTemp("", "x-"); err != nil {
		t.Fatal(err)
	}
	remove()
	if os.TempDir() != parent {
		t.Errorf("TMPDIR not restored: %s", os.TempDir())
	}
	if e, _ := os.ReadDir(parent); len(e) != 0 {
		t.Errorf("left in %s: %v", parent, e)
	}
}
