package env

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolveCacheDirCreatesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	t.Setenv(CacheDir, dir)
	got, err := ResolveCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(got); err != nil || !fi.IsDir() || got != dir {
		t.Fatalf("ResolveCacheDir() = %s (%v): want the directory %s created", got, err, dir)
	}
}
