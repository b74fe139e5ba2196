// Package matrix joins the JUnit files and run records of any number of
// skewproof runs into one report: a merged JUnit file, summary.json,
// matrix.md and a self-contained matrix.html (catalogue ids × kube-apiserver/
// kubelet pairs, one cell per verdict), and compares two runs or reports.
package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew/release"
)

// PropRun names the run a test suite of a merged JUnit file came from; a
// report read back as input splits into the same runs.
const PropRun = "run"

// Run is one input run: its test suites as read (every property kept) and
// its results.
type Run struct {
	// Name is the run's cluster (made unique among the inputs).
	Name string
	// Source is the path the run was read from, as given.
	Source string
	// Record is the run's run.json, when its directory has one.
	Record  *reports.Record
	Suites  []reporters.JUnitTestSuite
	Results []reports.Result
}

// Load reads runs from paths: directories written by 'skewproof run
// --junit-dir' (junit*.xml and run.json), directories written by
// 'skewproof report', or JUnit files. It returns an error naming the path
// and the remedy for a missing path, a directory without JUnit files, or a
// malformed JUnit file or run record.
func Load(paths ...string) ([]Run, error) {
	if len(paths) == 0 {
		return nil, errors.New("no input given; name the --junit-dir of one or more 'skewproof run's (or their JUnit files)")
	}
	var runs []Run
	for _, p := range paths {
		rs, err := loadPath(p)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
	}
	uniqueNames(runs)
	return runs, nil
}

func loadPath(p string) ([]Run, error) {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist; give the --junit-dir of a 'skewproof run' (or a JUnit file)", p)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	dir, files := p, []string{p}
	if st.IsDir() {
		files, _ = filepath.Glob(filepath.Join(p, "junit*.xml"))
		sort.Strings(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("%s holds no junit*.xml; give the --junit-dir of a 'skewproof run' (it writes junit-<cluster>.xml and run.json there)", p)
		}
	} else {
		dir = filepath.Dir(p)
	}
	rec, err := readRecord(dir)
	if err != nil {
		return nil, err
	}
	// Suites group into runs by their "run" property (a merged report),
	// else everything under p is one run.
	byRun := map[string]*Run{}
	var order []string
	for _, f := range files {
		doc, err := readJUnit(f)
		if err != nil {
			return nil, err
		}
		for _, s := range doc.TestSuites {
			key := s.Properties.WithName(PropRun)
			r, ok := byRun[key]
			if !ok {
				r = &Run{Source: p, Record: rec}
				byRun[key] = r
				order = append(order, key)
			}
			r.Suites = append(r.Suites, s)
			for _, tc := range s.TestCases {
				r.Results = append(r.Results, reports.ResultOf(tc))
			}
		}
	}
	var out []Run
	for _, key := range order {
		r := byRun[key]
		r.Name = runName(key, r, dir)
		if key != "" {
			r.Record = nil // a report's record is not the record of each run in it
		}
		r.redByRecord()
		out = append(out, *r)
	}
	return out, nil
}

// RedRecordID is the id of the failed test case a report adds to a run
// whose record says it was red while its JUnit file holds no failure (a
// JUnit file from an older skewproof, or one edited): the report never
// calls green a run the CLI called red.
const RedRecordID = "skewproof/run/verdict"

// redByRecord adds a failure to a run whose run.json says red and whose
// results would read green.
func (r *Run) redByRecord() {
	if r.Record == nil {
		return
	}
	red, why := r.Record.Red()
	if !red || !reports.Green(r.Results, false) {
		return
	}
	f := reports.RunFailure(r.Record.Cluster, RedRecordID, "the run's own verdict (run.json)",
		"run.json says the run was red (exit status "+fmt.Sprint(r.Record.ExitStatus)+"): "+why)
	r.Suites = append(r.Suites, reports.JUnitDoc(f).TestSuites...)
	r.Results = append(r.Results, f.Results...)
}

func readJUnit(f string) (reporters.JUnitTestSuites, error) {
	b, err := os.ReadFile(f)
	if err != nil {
		return reporters.JUnitTestSuites{}, fmt.Errorf("%s: %w", f, err)
	}
	doc, err := reports.DecodeJUnit(bytes.NewReader(b))
	if err != nil {
		return doc, fmt.Errorf("%s is not a readable JUnit file (%v); re-run 'skewproof run' for it or leave it out", f, errors.Unwrap(err))
	}
	return doc, nil
}

func readRecord(dir string) (*reports.Record, error) {
	rec, err := reports.ReadRecord(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%v; the run record is malformed: remove %s to report without it", err, filepath.Join(dir, reports.RecordFile))
	}
	return &rec, nil
}

// runName: the run property, else the cluster of the suites or record,
// else the directory's name.
func runName(key string, r *Run, dir string) string {
	if key != "" {
		return key
	}
	for _, s := range r.Suites {
		if c := s.Properties.WithName("cluster"); c != "" {
			return c
		}
	}
	if r.Record != nil && r.Record.Cluster != "" {
		return r.Record.Cluster
	}
	return filepath.Base(dir)
}

// uniqueNames suffixes repeated run names with #2, #3... in input order.
func uniqueNames(runs []Run) {
	seen := map[string]int{}
	for i := range runs {
		n := runs[i].Name
		seen[n]++
		if seen[n] > 1 {
			runs[i].Name = fmt.Sprintf("%s#%d", n, seen[n])
		}
	}
}

// apiserverOf is the run's kube-apiserver version: from its results, else
// its record ("" when neither says).
func (r Run) apiserverOf() string {
	for _, res := range r.Results {
		if res.APIServer != "" {
			return release.BareVersion(res.APIServer)
		}
	}
	if r.Record != nil {
		return release.BareVersion(r.Record.APIServer)
	}
	return ""
}
