// Package tartest reads tar archives in tests: the bundles, the Sonobuoy
// results tarball and the image layers the project writes.
package tartest

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// Entry is one member of an archive: its header and its content.
type Entry struct {
	Header *tar.Header
	Data   []byte
}

// Read returns the members of the tar archive r in order; a malformed
// archive fails t.
func Read(t testing.TB, r io.Reader) []Entry {
	t.Helper()
	var out []Entry
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Entry{h, b})
	}
}

// ReadGzipFile returns the members of the gzip'd tar archive at path in
// order.
func ReadGzipFile(t testing.TB, path string) []Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not gzip: %v", path, err)
	}
	return Read(t, gz)
}
