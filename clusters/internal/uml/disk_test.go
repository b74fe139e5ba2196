package uml

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A disk is stale when Docker no longer has its node image or its node
// files are not this build's; a live image's disk and a disk being built
// stay.
func TestStaleDisks(t *testing.T) {
	cache := t.TempDir()
	fh, err := filesHash()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "uml")
	if err := os.MkdirAll(filepath.Join(dir, ".build-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	live := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	keep := "disk-0123456789abcdef-" + fh + ".ext4"
	gone := "disk-fedcba9876543210-" + fh + ".ext4"
	oldFiles := "disk-0123456789abcdef-0000000000000000.ext4"
	for _, f := range []string{keep, gone, oldFiles, ".build-x/disk.ext4", "kernel-x.lock"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := StaleDisks(cache, func() ([]string, error) { return []string{live}, nil })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range stale {
		names = append(names, filepath.Base(s))
	}
	slices.Sort(names)
	if want := []string{oldFiles, gone}; !slices.Equal(names, want) {
		t.Errorf("stale %q, want %q", names, want)
	}
	// With no image left, every disk is stale.
	if stale, _ := StaleDisks(cache, func() ([]string, error) { return nil, nil }); len(stale) != 3 {
		t.Errorf("no live image: stale %q, want all three disks", stale)
	}
	// Without a disk, Docker is not asked.
	if _, err := StaleDisks(t.TempDir(), func() ([]string, error) { t.Error("Docker asked with no disk"); return nil, nil }); err != nil {
		t.Error(err)
	}
}
