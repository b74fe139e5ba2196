package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options of Generate.
type Options struct {
	// Inputs are run directories, report directories or JUnit files.
	Inputs []string
	// Out is the directory to write; it is replaced only when it holds a
	// previous report (a summary.json) or nothing.
	Out string
	// Baseline, when set, is a run or report to compare the inputs with.
	Baseline string
}

// Generated is what Generate wrote.
type Generated struct {
	Report Report
	Diff   *Diff
	Files  []string
}

// Headline is one line about the report.
func (g Generated) Headline() string {
	s := fmt.Sprintf("%d runs, %d apiserver/kubelet@runtime columns, %d ids, %d cells: %s", len(g.Report.Runs), len(g.Report.Pairs),
		ids(g.Report), len(g.Report.Cells), countsText(g.Report.Counts))
	if g.Diff != nil {
		s += fmt.Sprintf("\nagainst %s: %s", g.Diff.Old, g.Diff.Headline())
	}
	return s
}

func ids(rep Report) int {
	seen := map[string]bool{}
	for _, c := range rep.Cells {
		seen[c.ID] = true
	}
	return len(seen)
}

// Generate reads the inputs (and the baseline), then writes junit.xml,
// summary.json, matrix.md and matrix.html into opts.Out. Nothing is
// written unless every input reads; the directory appears whole or not at
// all (it is written beside Out and renamed into place).
func Generate(opts Options) (Generated, error) {
	if opts.Out == "" {
		return Generated{}, errors.New("give the output directory with --out DIR")
	}
	runs, err := Load(opts.Inputs...)
	if err != nil {
		return Generated{}, err
	}
	g := Generated{Report: Build(runs)}
	if opts.Baseline != "" {
		old, err := Load(opts.Baseline)
		if err != nil {
			return Generated{}, fmt.Errorf("--baseline: %w", err)
		}
		d := Compare(opts.Baseline, Build(old), strings.Join(opts.Inputs, " "), g.Report)
		g.Diff = &d
	}
	if err := checkOut(opts.Out); err != nil {
		return Generated{}, err
	}
	files := map[string]func(io.Writer) error{
		JUnitFile:    func(w io.Writer) error { return WriteJUnit(w, runs) },
		SummaryFile:  func(w io.Writer) error { return WriteSummary(w, g.Report) },
		MarkdownFile: func(w io.Writer) error { return WriteMarkdown(w, g.Report, g.Diff) },
		HTMLFile:     func(w io.Writer) error { return WriteHTML(w, g.Report, g.Diff) },
	}
	parent := filepath.Dir(filepath.Clean(opts.Out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Generated{}, err
	}
	tmp, err := os.MkdirTemp(parent, ".skewproof-report-")
	if err != nil {
		return Generated{}, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	for _, name := range []string{JUnitFile, SummaryFile, MarkdownFile, HTMLFile} {
		var b bytes.Buffer
		if err := files[name](&b); err != nil {
			return Generated{}, fmt.Errorf("writing %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b.Bytes(), 0o644); err != nil {
			return Generated{}, err
		}
		g.Files = append(g.Files, filepath.Join(opts.Out, name))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Generated{}, err
	}
	if err := replaceDir(tmp, opts.Out); err != nil {
		return Generated{}, err
	}
	return g, nil
}

// checkOut refuses an --out that is a file, or a non-empty directory that
// holds no previous report.
func checkOut(out string) error {
	st, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("--out %s is a file; give a directory", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, SummaryFile)); err != nil {
		return fmt.Errorf("--out %s exists and holds no previous report (no %s); give a new or empty directory", out, SummaryFile)
	}
	return nil
}

// replaceDir moves dir to out, replacing a previous out.
func replaceDir(dir, out string) error {
	old := ""
	if _, err := os.Stat(out); err == nil {
		old = dir + ".old"
		if err := os.Rename(out, old); err != nil {
			return err
		}
	}
	if err := os.Rename(dir, out); err != nil {
		if old != "" {
			_ = os.Rename(old, out)
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// DiffPaths compares two runs or reports (directories or JUnit files).
// With runtime selectors (both or neither), each side is restricted to the
// results of the runtimes its selector names and compared without the
// runtime (SelectRuntime): oldPath and newPath may be the same run.
func DiffPaths(oldPath, newPath, oldRuntime, newRuntime string) (Diff, error) {
	if (oldRuntime == "") != (newRuntime == "") {
		return Diff{}, fmt.Errorf("give both --old-runtime and --new-runtime, or neither")
	}
	side := func(path, sel string) (string, Report, error) {
		runs, err := Load(path)
		if err != nil {
			return "", Report{}, err
		}
		rep := Build(runs)
		if sel == "" {
			return path, rep, nil
		}
		rep, err = SelectRuntime(rep, sel)
		if err != nil {
			return "", Report{}, fmt.Errorf("%s: %w", path, err)
		}
		return path + " (runtime " + sel + ")", rep, nil
	}
	oldName, old, err := side(oldPath, oldRuntime)
	if err != nil {
		return Diff{}, err
	}
	newName, cur, err := side(newPath, newRuntime)
	if err != nil {
		return Diff{}, err
	}
	return Compare(oldName, old, newName, cur), nil
}
