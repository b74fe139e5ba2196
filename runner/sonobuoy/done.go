package sonobuoy

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

const (
	// DoneFile is the name of the file, in the results dir, whose appearance
	// tells the sonobuoy-worker sidecar that the plugin is finished.
	DoneFile = "done"
	// TarballName is the name of the results tarball Done writes.
	TarballName = "results.tar.gz"
)

// Done hands the results to Sonobuoy. It writes <resultsDir>/results.tar.gz
// holding files (paths relative to resultsDir, kept as the names inside the
// tarball) and then <resultsDir>/done whose content is the absolute path of
// that tarball. It returns the tarball's path.
//
// The worker side of the contract (pkg/worker/worker.go, GatherResults and
// handleWaitFile; cmd/sonobuoy/app/worker.go passes <SONOBUOY_RESULTS_DIR>/done):
//   - it polls for the done file once a second, waits 5 s
//     (SONOBUOY_DONE_FILE_DELAY), reads it again and trims white space;
//   - the content is a path the worker opens as is, in its own container
//     (which mounts the same "results" volume at the same path), so it must be
//     absolute;
//   - a directory is tarred by the worker into <dir>/results.tar.gz; a file
//     is sent as is, its MIME type taken from the extension (".gz" is
//     registered as application/gzip);
//   - the aggregator unpacks an application/gzip body as a gzipped tar into
//     plugins/<plugin>/results/global/ (pkg/plugin/aggregation/aggregator.go,
//     handleArchiveResult; pkg/tarball/tarball.go, DecodeTarball, which keeps
//     only directories, regular files and symlinks); any other body is stored
//     as one file.
//
// For result-format junit Sonobuoy then reads every *.xml file it unpacked
// (pkg/client/results/processing.go, PostProcessPlugin).
//
// Both files are written under a temporary name and renamed, so the worker
// never sees a partial tarball or done file.
func Done(resultsDir string, files []string) (string, error) {
	dir, err := filepath.Abs(resultsDir)
	if err != nil {
		return "", fmt.Errorf("sonobuoy done: %w", err)
	}
	names := make([]string, 0, len(files))
	seen := map[string]bool{}
	for _, f := range files {
		if !filepath.IsLocal(f) {
			return "", fmt.Errorf("sonobuoy done: %q is not a path inside the results dir %s", f, dir)
		}
		name := filepath.Clean(f)
		switch {
		case name == DoneFile || name == TarballName:
			return "", fmt.Errorf("sonobuoy done: %q is the name of a file Done writes", f)
		case seen[name]:
			return "", fmt.Errorf("sonobuoy done: %q given twice", f)
		}
		seen[name] = true
		names = append(names, name)
	}

	tarball := filepath.Join(dir, TarballName)
	if err := writeAtomic(tarball, func(w io.Writer) error { return writeTarball(w, dir, names) }); err != nil {
		return "", fmt.Errorf("sonobuoy done: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, DoneFile), func(w io.Writer) error {
		_, err := io.WriteString(w, tarball)
		return err
	}); err != nil {
		return "", fmt.Errorf("sonobuoy done: %w", err)
	}
	return tarball, nil
}

func writeTarball(w io.Writer, dir string, names []string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, name := range names {
		if err := addFile(tw, dir, name); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func addFile(tw *tar.Writer, dir, name string) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", f.Name())
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     filepath.ToSlash(name),
		Mode:     int64(fi.Mode().Perm()),
		Size:     fi.Size(),
		ModTime:  fi.ModTime(),
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}

// writeAtomic writes path through a temporary file in the same directory that
// is synced and renamed into place.
func writeAtomic(path string, write func(io.Writer) error) error {
	t, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(0o644))
	if err != nil {
		return err
	}
	defer func() { _ = t.Cleanup() }()
	if err := write(t); err != nil {
		return err
	}
	return t.CloseAtomicallyReplace()
}
