package matrix

import (
	"encoding/xml"
	"io"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
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
					tc.Status = statusOf(reports.ResultOf(tc).Verdict)
					if tc.Failure != nil {
						// A flaky case its run did not tolerate.
						tc.Status = "failed"
					}
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
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// statusOf is the Ginkgo spec state a verdict corresponds to, for the
// status attribute of a test case written without one.
func statusOf(v skew.Verdict) string {
	switch v {
	case skew.Fail:
		return "failed"
	case skew.Skip:
		return "skipped"
	}
	return "passed"
}

// shortText is s cut to its first line.
func shortText(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
