package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// IDLabel is the Ginkgo label of a catalogue id ('/' is not allowed in labels).
func IDLabel(id string) string { return strings.ReplaceAll(strings.TrimSpace(id), "/", "-") }

// IDFilter selects the specs of ids, on the given nodes when nodes[id] is set.
func IDFilter(ids []string, nodes map[string][]string) string {
	var alts []string
	for _, id := range ids {
		f := IDLabel(id)
		if ns := nodes[id]; len(ns) > 0 {
			f = "(" + f + " && node: containsAny {" + strings.Join(ns, ", ") + "})"
		}
		alts = append(alts, f)
	}
	return strings.Join(alts, " || ")
}

// FailedFilter selects the specs that failed or were flaky in an earlier
// run, on the nodes they failed on: junit is a JUnit file, or a directory
// holding them (a run's --junit-dir, a report's --out).
func FailedFilter(junit string) (string, error) {
	files, err := junitFiles(junit)
	if err != nil {
		return "", err
	}
	suites, err := reports.ReadJUnitFiles(files...)
	if err != nil {
		return "", err
	}
	var ids []string
	nodes := map[string][]string{}
	seen := map[string]bool{}
	for _, s := range suites {
		for _, r := range s.Results {
			if r.Verdict != skew.Fail && r.Verdict != skew.Flaky || r.ID == "" {
				continue
			}
			if !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
			}
			if r.Node != "" {
				nodes[r.ID] = append(nodes[r.ID], r.Node)
			} else {
				nodes[r.ID] = nil
			}
		}
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("no failed or flaky spec in %s: nothing to rerun", junit)
	}
	// An id that failed at cluster level runs everywhere it applies.
	for _, id := range ids {
		for _, n := range nodes[id] {
			if n == "" {
				nodes[id] = nil
			}
		}
	}
	return IDFilter(ids, nodes), nil
}

// ParseSuites reads a comma-separated list of suites (empty items are
// ignored; none: every suite). Whether the suite binary has them is the
// run's first step (ResolveSuites).
func ParseSuites(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// junitFiles is path itself, or the JUnit files directly in directory path:
// the merged report's when there is one, else the runs' junit-*.xml.
func junitFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading the earlier report: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	for _, pattern := range []string{"junit.xml", "junit_01.xml", "junit-*.xml"} {
		m, _ := filepath.Glob(filepath.Join(path, pattern))
		var files []string
		for _, f := range m {
			if !perProcess(filepath.Base(f)) {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			return files, nil
		}
	}
	return nil, fmt.Errorf("no JUnit file (junit.xml, junit_01.xml or junit-*.xml) in %s; give the file itself", path)
}

// perProcess tells the files a run keeps beside its merged JUnit file
// (junit-<name>.<suite>.xml, junit-<name>.<suite>.part-<p>.xml): a cluster
// name has no dot (a DNS label), so a dot in the middle is a suite's.
func perProcess(base string) bool {
	return strings.HasPrefix(base, "junit-") && strings.Contains(strings.TrimSuffix(base, ".xml"), ".")
}
