package sonobuoy

import (
	"archive/tar"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skewproof/skewproof/internal/tartest"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTarball returns the regular files of a gzipped tar and fails on any
// other kind of entry.
func readTarball(t *testing.T, path string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, e := range tartest.ReadGzipFile(t, path) {
		if e.Header.Typeflag != tar.TypeReg {
			t.Errorf("entry %s has type %c", e.Header.Name, e.Header.Typeflag)
		}
		got[e.Header.Name] = string(e.Data)
	}
	return got
}

func TestDone(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"junit_skewproof.xml": "<testsuites/>",
		"reports/run.json":    `{"ok":true}`,
	}
	writeFiles(t, dir, files)
	writeFiles(t, dir, map[string]string{"not-listed.log": "x"})

	tarball, err := Done(dir, []string{"junit_skewproof.xml", "./reports/run.json"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "results.tar.gz"); tarball != want {
		t.Errorf("tarball = %s, want %s", tarball, want)
	}
	// pkg/worker/worker.go (GatherResults) reads <results dir>/done, trims it
	// and opens the path it names.
	done, err := os.ReadFile(filepath.Join(dir, "done"))
	if err != nil {
		t.Fatal(err)
	}
	if string(done) != tarball {
		t.Errorf("done = %q, want %q", done, tarball)
	}
	got := readTarball(t, tarball)
	if !maps.Equal(got, files) {
		t.Errorf("tarball holds %v, want %v", got, files)
	}
	// No temporary files left beside them.
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"done", "junit_skewproof.xml", "not-listed.log", "reports", "results.tar.gz"}; !slices.Equal(names, want) {
		t.Errorf("results dir holds %v, want %v", names, want)
	}
}

// The worker opens the done file's path in its own container, so it must be
// absolute even when the results dir is given relative to the working dir.
func TestDoneAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, dir, map[string]string{"r/a.xml": "a"})
	tarball, err := Done("r", []string{"a.xml"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := os.ReadFile(filepath.Join(dir, "r", "done"))
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(string(done)) || string(done) != tarball {
		t.Errorf("done = %q, returned %q; want one absolute path", done, tarball)
	}
}

func TestDoneRejects(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "results")
	writeFiles(t, base, map[string]string{"outside.xml": "o", "results/a.xml": "a", "results/sub/b.xml": "b"})
	for _, files := range [][]string{
		{"../outside.xml"},
		{filepath.Join(dir, "a.xml")},
		{"done"},
		{"results.tar.gz"},
		{"a.xml", "./a.xml"},
		{"missing.xml"},
		{"sub"},
	} {
		if _, err := Done(dir, files); err == nil {
			t.Errorf("Done(%q): no error", files)
		}
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			t.Fatalf("Done(%q) failed but wrote the done file", files)
		}
	}
}
