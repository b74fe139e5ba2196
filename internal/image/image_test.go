package image

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/tartest"
)

func TestParseLdd(t *testing.T) {
	out := `	linux-vdso.so.1 (0x00007ffd1a5f0000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f092e80e000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f092eb6a000)
`
	got, err := ParseLdd(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := ParseLdd("\tlibfoo.so.1 => not found\n" + out); err == nil || !strings.Contains(err.Error(), "libfoo.so.1") {
		t.Errorf("a missing library must be an error naming it: %v", err)
	}
}

// testLayer writes a small layer: a file, a link, literal data.
func testLayer(t *testing.T, dir string) Layer {
	t.Helper()
	src := filepath.Join(dir, "bin")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := NewLayer().File("/usr/local/bin/x", src, 0o755).Symlink("/bin/y", "x").Data("/etc/z", []byte("z"), 0o644).
		WriteTo(filepath.Join(dir, "l.tar"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// readTar returns the files of a tar by name, and their names in order.
func readTar(t *testing.T, r io.Reader) (map[string][]byte, []string) {
	t.Helper()
	files := map[string][]byte{}
	var names []string
	for _, e := range tartest.Read(t, r) {
		files[e.Header.Name] = e.Data
		names = append(names, e.Header.Name)
	}
	return files, names
}

func TestLayerIsReproducible(t *testing.T) {
	dir := t.TempDir()
	a, b := testLayer(t, dir), testLayer(t, dir)
	if a.DiffID != b.DiffID || !strings.HasPrefix(a.DiffID, "sha256:") {
		t.Fatalf("layer digests %s and %s: want equal sha256 digests for equal input", a.DiffID, b.DiffID)
	}
	d, err := DigestFile(a.Path)
	if err != nil || d != a {
		t.Fatalf("DigestFile = %+v, %v; want %+v", d, err, a)
	}
	raw, _ := os.ReadFile(a.Path)
	_, names := readTar(t, bytes.NewReader(raw))
	want := []string{"bin/", "bin/y", "etc/", "etc/z", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/x"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("entries %v, want %v (sorted, parents included)", names, want)
	}
}

type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

type configFile struct {
	Architecture string
	OS           string
	Created      string
	Config       struct {
		Env        []string
		Entrypoint []string
		Cmd        []string
		StopSignal string
		Labels     map[string]string
		WorkingDir string
		User       string
	}
	RootFS struct {
		Type    string
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// writeReproducibly writes img's archive twice, fails the test when the two
// differ, and returns the archive's files and its manifest.json.
func writeReproducibly(t *testing.T, img Image) (map[string][]byte, []manifestEntry) {
	t.Helper()
	var buf, again bytes.Buffer
	if err := Write(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := Write(&again, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two archives of the same image differ")
	}
	files, _ := readTar(t, &buf)
	var manifest []manifestEntry
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	return files, manifest
}

// The archive is what docker load and ctr import read: manifest.json names
// the config and the layer files; the config carries this host's
// architecture, linux, the image configuration and the layers' diff IDs; the
// layer is stored as written (uncompressed, named after its digest); and
// equal inputs give equal bytes.
func TestArchive(t *testing.T) {
	dir := t.TempDir()
	l := testLayer(t, dir)
	img := Image{Tags: []string{"example.org/xy:1"}, Layers: []Layer{l}, Entrypoint: []string{"/usr/local/bin/x"}, Cmd: []string{"serve"},
		StopSignal: "SIGRTMIN+3", Labels: map[string]string{"io.skewproof.image": "test"}, WorkingDir: "/w", User: "65532"}
	files, manifest := writeReproducibly(t, img)
	if len(manifest) != 1 || !reflect.DeepEqual(manifest[0].RepoTags, []string{"example.org/xy:1"}) || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest %+v", manifest)
	}
	layer, ok := files[manifest[0].Layers[0]]
	if want := strings.TrimPrefix(l.DiffID, "sha256:") + ".tar"; manifest[0].Layers[0] != want || !ok {
		t.Fatalf("layer file %s (in archive: %v), want %s", manifest[0].Layers[0], ok, want)
	}
	if raw, _ := os.ReadFile(l.Path); !bytes.Equal(layer, raw) {
		t.Error("the layer in the archive is not the layer tar as written")
	}
	var cfg configFile
	if err := json.Unmarshal(files[manifest[0].Config], &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Architecture != runtime.GOARCH || cfg.OS != "linux" {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if cfg.RootFS.Type != "layers" || !reflect.DeepEqual(cfg.RootFS.DiffIDs, []string{l.DiffID}) {
		t.Errorf("rootfs %+v, want layers [%s]", cfg.RootFS, l.DiffID)
	}
	c := cfg.Config
	if !reflect.DeepEqual(c.Env, []string{DefaultPath}) || !reflect.DeepEqual(c.Entrypoint, img.Entrypoint) || !reflect.DeepEqual(c.Cmd, img.Cmd) ||
		c.StopSignal != img.StopSignal || !reflect.DeepEqual(c.Labels, img.Labels) || c.WorkingDir != img.WorkingDir || c.User != img.User {
		t.Errorf("config %+v does not match %+v", c, img)
	}
	if !strings.HasPrefix(cfg.Created, "1970-01-01T00:00:00") {
		t.Errorf("created %s, want the epoch", cfg.Created)
	}
}

// With Gzip the archive stores each layer gzip-compressed, named after the
// digest of the compressed bytes, and the config keeps the uncompressed
// diff ID: what docker load and ctr import check once they decompress it.
// The same image gives the same bytes again.
func TestArchiveGzip(t *testing.T) {
	dir := t.TempDir()
	l := testLayer(t, dir)
	img := Image{Tags: []string{"example.org/xy:1"}, Layers: []Layer{l}, Gzip: true}
	files, manifest := writeReproducibly(t, img)
	if len(manifest) != 1 || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest %+v", manifest)
	}
	blob, ok := files[manifest[0].Layers[0]]
	if !ok {
		t.Fatalf("layer file %s not in the archive", manifest[0].Layers[0])
	}
	sum := sha256.Sum256(blob)
	if want := hex.EncodeToString(sum[:]) + ".tar.gz"; manifest[0].Layers[0] != want {
		t.Errorf("layer file %s, want %s (the compressed digest)", manifest[0].Layers[0], want)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		t.Fatalf("the layer is not gzip: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(l.Path); !bytes.Equal(plain, raw) {
		t.Error("the decompressed layer is not the layer tar as written")
	}
	var cfg configFile
	if err := json.Unmarshal(files[manifest[0].Config], &cfg); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.RootFS.DiffIDs, []string{l.DiffID}) {
		t.Errorf("diff IDs %v, want [%s]", cfg.RootFS.DiffIDs, l.DiffID)
	}
}

// Several images in one archive: one manifest entry per image with all its
// tags, a layer shared by two images stored once.
func TestArchiveOfSeveralImages(t *testing.T) {
	dir := t.TempDir()
	l := testLayer(t, dir)
	other, err := NewLayer().Data("/other", []byte("o"), 0o644).WriteTo(filepath.Join(dir, "o.tar"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf,
		Image{Tags: []string{"registry.k8s.io/e2e-test-images/busybox:1.37", "skewproof.local/busybox:1"}, Layers: []Layer{l}, Cmd: []string{"sh"}},
		Image{Tags: []string{"registry.k8s.io/pause:3.10"}, Layers: []Layer{l, other}, Env: []string{"A=b"}},
	); err != nil {
		t.Fatal(err)
	}
	files, _ := readTar(t, &buf)
	var manifest []manifestEntry
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 2 {
		t.Fatalf("manifest %+v: want 2 images", manifest)
	}
	tags := map[string]int{}
	for i, m := range manifest {
		for _, tag := range m.RepoTags {
			tags[tag] = len(manifest[i].Layers)
		}
	}
	if !reflect.DeepEqual(tags, map[string]int{"registry.k8s.io/e2e-test-images/busybox:1.37": 1, "skewproof.local/busybox:1": 1, "registry.k8s.io/pause:3.10": 2}) {
		t.Errorf("tags with their layer counts: %v", tags)
	}
	layerFiles := 0
	for n := range files {
		if strings.HasSuffix(n, ".tar") {
			layerFiles++
		}
	}
	if layerFiles != 2 {
		t.Errorf("%d layer files, want 2 (the shared one once)", layerFiles)
	}
}

func TestWriteRefusesWhatCannotLoad(t *testing.T) {
	l := testLayer(t, t.TempDir())
	for name, img := range map[string]Image{
		"no tag":       {Layers: []Layer{l}},
		"bad tag":      {Tags: []string{"UPPER/case:1"}, Layers: []Layer{l}},
		"bad digest":   {Tags: []string{"x:1"}, Layers: []Layer{{Path: l.Path, DiffID: "md5:00"}}},
		"missing file": {Tags: []string{"x:1"}, Layers: []Layer{{Path: l.Path + ".gone", DiffID: l.DiffID}}},
	} {
		if err := Write(io.Discard, img); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
