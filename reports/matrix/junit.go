package matrix

import (
	"io"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/skewproof/skewproof/reports"
)

// JUnitFile is the merged JUnit file of a report.
const JUnitFile = "junit.xml"

// WriteJUnit writes one JUnit document with one <testsuite> per run, named
// after the run, holding every test case of the run as read (all its
// properties, its failure or skipped element; its classname is still the
// suite family). The suite's properties name the run, its cluster, its
// kube-apiserver version and where it was read from.
func WriteJUnit(w io.Writer, runs []Run) error {
	doc := reporters.JUnitTestSuites{}
	for _, run := range runs {
		js := reporters.JUnitTestSuite{Name: run.Name, Package: run.Source}
		props := []reporters.JUnitProperty{{Name: PropRun, Value: run.Name}}
		cluster, ts := "", ""
		for _, s := range run.Suites {
			if c := s.Properties.WithName("cluster"); c != "" && cluster == "" {
				cluster = c
			}
			if s.Timestamp != "" && (ts == "" || s.Timestamp < ts) {
				ts = s.Timestamp
			}
			for _, tc := range s.TestCases {
				if tc.Status == "" {
					// A file written before test cases carried a status: a
					// flaky case with a <failure> was not tolerated.
					tc.Status = reports.Status(reports.ResultOf(tc), tc.Failure == nil)
				}
				switch {
				case tc.Failure != nil:
					js.Failures++
				case tc.Error != nil:
					js.Errors++
				case tc.Skipped != nil:
					js.Skipped++
				}
				js.Tests++
				js.Time += tc.Time
				js.TestCases = append(js.TestCases, tc)
			}
		}
		if cluster != "" {
			props = append(props, reporters.JUnitProperty{Name: "cluster", Value: cluster})
		}
		if api := run.apiserverOf(); api != "" {
			props = append(props, reporters.JUnitProperty{Name: "apiserver-version", Value: api})
		}
		js.Properties.Properties = props
		js.Timestamp = ts
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Errors += js.Errors
		doc.Disabled += js.Skipped
		doc.Time += js.Time
		doc.TestSuites = append(doc.TestSuites, js)
	}
	return reports.EncodeJUnit(w, doc)
}

// shortText is s cut to its first line.
func shortText(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
