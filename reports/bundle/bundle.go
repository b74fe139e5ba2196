// Package bundle packs the results of one skewproof run into a single
// gzip'd tar laid out like a CNCF conformance submission (junit_01.xml,
// e2e.log) plus what is needed to read and re-check it: the run record,
// the versions, the oracle rules in force, the exact command, and
// SHA-256 sums of every file. It is a self-check in that layout, not a CNCF
// certification: skewproof's specs are not [Conformance] specs.
//
// Create writes a bundle from a run directory; Verify checks one.
package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew/release"
)

// Names of the files of a bundle.
const (
	JUnitFile    = "junit_01.xml"
	LogFile      = "e2e.log"
	RecordFile   = reports.RecordFile // run.json
	VersionsFile = "versions.txt"
	OracleFile   = "oracle.md"
	CommandFile  = "command.txt"
	ReadmeFile   = "README.txt"
	SumsFile     = "SHA256SUMS"
)

// requiredFiles are the files every bundle holds besides SHA256SUMS.
var requiredFiles = []string{ReadmeFile, CommandFile, LogFile, JUnitFile, OracleFile, RecordFile, VersionsFile}

// ErrNoRecord is returned (wrapped) by Create when the directory holds no
// run record.
var ErrNoRecord = errors.New("run record missing")

// Options tune Create.
type Options struct {
	// Tool is the version of the skewproof binary that makes the bundle
	// (versions.txt); "" takes it from the binary's build information.
	Tool string
	// Overwrite replaces an existing output file instead of refusing it.
	Overwrite bool
}

// file is one member of the bundle.
type file struct {
	name string
	data []byte
}

// Create writes the bundle of the run directory fromDir to outFile (a
// .tar.gz). The same directory always gives the same bytes: members are
// sorted by name (SHA256SUMS last), have mode 0644, and carry the run's
// finish time. On error nothing is left at outFile (an existing file is
// only replaced when opts.Overwrite is set, and only once the new bundle is
// complete).
func Create(fromDir, outFile string, opts Options) error {
	if !opts.Overwrite {
		if _, err := os.Lstat(outFile); err == nil {
			return fmt.Errorf("%s already exists; remove it or overwrite it", outFile)
		}
	}
	files, mtime, err := collect(fromDir, opts)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(outFile), "."+filepath.Base(outFile)+".*.partial")
	if err != nil {
		return fmt.Errorf("creating %s: %w", outFile, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := writeTarGz(tmp, files, mtime); err != nil {
		return fmt.Errorf("writing %s: %w", outFile, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", outFile, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", outFile, err)
	}
	if !opts.Overwrite {
		if _, err := os.Lstat(outFile); err == nil {
			return fmt.Errorf("%s already exists; remove it or overwrite it", outFile)
		}
	}
	if err := os.Rename(tmp.Name(), outFile); err != nil {
		return fmt.Errorf("writing %s: %w", outFile, err)
	}
	done = true
	return nil
}

// collect reads the run directory and renders every member of the bundle,
// SHA256SUMS last. mtime is the time every member carries.
func collect(dir string, opts Options) ([]file, time.Time, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("run directory %s: %w", dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return nil, time.Time{}, fmt.Errorf("%s is not a directory; give the run directory (the --junit-dir of 'skewproof run')", dir)
	}
	var rec reports.Record
	rawRecord, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		// What Hydrophone downloads: e2e.log holds the record.
		rec, rawRecord, err = reports.RecordFromLog(filepath.Join(dir, LogFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, time.Time{}, fmt.Errorf("%s: %w (%s, or a run record line in %s): bundle the directory given as --junit-dir to 'skewproof run' (or the in-cluster results directory, or Hydrophone's --output-dir)", dir, ErrNoRecord, RecordFile, LogFile)
		}
		if err != nil {
			return nil, time.Time{}, err
		}
	} else if err != nil {
		return nil, time.Time{}, err
	} else if rec, err = reports.ReadRecord(dir); err != nil {
		return nil, time.Time{}, err
	}
	if opts.Tool == "" {
		opts.Tool = reports.ToolVersion()
	}

	junit, err := mergeJUnit(dir, rec)
	if err != nil {
		return nil, time.Time{}, err
	}
	log, err := runLog(dir, rec)
	if err != nil {
		return nil, time.Time{}, err
	}
	var oracle bytes.Buffer
	if err := writeOracle(&oracle, rec); err != nil {
		return nil, time.Time{}, err
	}
	files := []file{
		{JUnitFile, junit},
		{LogFile, log},
		{RecordFile, rawRecord},
		{VersionsFile, versionsText(rec, opts.Tool)},
		{OracleFile, oracle.Bytes()},
		{CommandFile, []byte(commandText(rec))},
		{ReadmeFile, []byte(readmeText(rec))},
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var sums bytes.Buffer
	for _, f := range files {
		h := sha256.Sum256(f.data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), f.name)
	}
	files = append(files, file{SumsFile, sums.Bytes()})

	mtime := rec.Finished
	if mtime.IsZero() {
		mtime = rec.Started
	}
	if mtime.IsZero() || mtime.Before(time.Unix(0, 0)) {
		mtime = time.Unix(0, 0)
	}
	return files, mtime.UTC().Truncate(time.Second), nil
}

// writeTarGz writes files, in order, as a deterministic gzip'd tar.
func writeTarGz(w io.Writer, files []file, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.name,
			Mode:     0o644,
			Size:     int64(len(f.data)),
			ModTime:  mtime,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// junitFiles lists the JUnit files of a run directory: junit_01.xml if
// present, else every junit-*.xml, sorted.
func junitFiles(dir string) ([]string, error) {
	one := filepath.Join(dir, JUnitFile)
	if _, err := os.Stat(one); err == nil {
		return []string{one}, nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, "junit-*.xml"))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("%s has no JUnit file (%s or junit-*.xml): bundle the directory of a finished run", dir, JUnitFile)
	}
	sort.Strings(matches)
	return matches, nil
}

// mergeJUnit reads every JUnit file of the run and writes them as one
// document. A file whose suites belong to another cluster than the run
// record's is refused: the directory then mixes runs.
func mergeJUnit(dir string, rec reports.Record) ([]byte, error) {
	paths, err := junitFiles(dir)
	if err != nil {
		return nil, err
	}
	var all []reports.Suite
	for _, p := range paths {
		suites, err := reports.ReadJUnitFiles(p)
		if err != nil {
			return nil, err
		}
		for _, s := range suites {
			if rec.Cluster != "" && s.Cluster != "" && s.Cluster != rec.Cluster {
				return nil, fmt.Errorf("%s holds results of cluster %q but %s records cluster %q: the directory mixes runs; give each run its own --junit-dir", filepath.Base(p), s.Cluster, RecordFile, rec.Cluster)
			}
		}
		all = append(all, suites...)
	}
	var buf bytes.Buffer
	if err := reports.WriteJUnit(&buf, all...); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// logFiles lists the logs of a run: e2e.log if present; else the files the
// record names (its Logs, globs allowed, in the directory); else every
// *.log of the directory.
func logFiles(dir string, rec reports.Record) ([]string, error) {
	one := filepath.Join(dir, LogFile)
	if _, err := os.Stat(one); err == nil {
		return []string{one}, nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(pattern string) error {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return fmt.Errorf("%s: log pattern %q: %w", RecordFile, pattern, err)
		}
		sort.Strings(matches)
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
		return nil
	}
	for _, l := range rec.Logs {
		if err := add(filepath.Base(l)); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		if err := add("*.log"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runLog is e2e.log: a header naming the versions, then the run's log (or
// its logs, each after a "==> name <==" line).
func runLog(dir string, rec reports.Record) ([]byte, error) {
	paths, err := logFiles(dir, rec)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	writeLogHeader(&buf, rec)
	if len(paths) == 0 {
		buf.WriteString("(the run directory holds no log)\n")
	}
	single := len(paths) == 1 && filepath.Base(paths[0]) == LogFile
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if !single {
			if i > 0 {
				buf.WriteString("\n")
			}
			fmt.Fprintf(&buf, "==> %s <==\n", filepath.Base(p))
		}
		buf.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			buf.WriteString("\n")
		}
	}
	return buf.Bytes(), nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// vprefix writes a Kubernetes version with its leading "v".
func vprefix(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "unknown"
	}
	return "v" + release.BareVersion(s)
}
