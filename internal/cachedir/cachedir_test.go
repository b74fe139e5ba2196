package cachedir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolveCreatesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	t.Setenv(Env, dir)
	got, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(got); err != nil || !fi.IsDir() || got != dir {
		t.Fatalf("Resolve() = %s (%v): want the directory %s created", got, err, dir)
	}
}
