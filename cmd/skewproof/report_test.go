package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const reportFixtures = "../../reports/matrix/testdata"

// runReport runs the command line through a fresh command tree and returns
// its stdout and error.
func runReport(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	_, err := root.ExecuteContextC(context.Background())
	return out.String(), err
}

func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report")
	stdout, err := runReport(t, "report", reportFixtures+"/runs/a", reportFixtures+"/runs/b", "--out", out, "--baseline", reportFixtures+"/runs/a2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "2 runs, 3 apiserver/kubelet@runtime columns") || !strings.Contains(stdout, "cells changed") {
		t.Errorf("stdout: %s", stdout)
	}
	for _, f := range []string{"junit.xml", "summary.json", "matrix.md", "matrix.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(out, "matrix.html"))
	if !bytes.Contains(html, []byte(`id="diff"`)) {
		t.Errorf("matrix.html has no changes section with --baseline")
	}
	stdout, err = runReport(t, "report", "diff", out, reportFixtures+"/runs/a2", "--format", "markdown")
	if err != nil || !strings.Contains(stdout, "## Changes from") || !strings.Contains(stdout, "### newly failing") {
		t.Errorf("report diff --format markdown: %v\n%s", err, stdout)
	}
}

// Bad input: exit non-zero, one line on stderr naming the remedy, no --out.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--out", out}, 2, "give one or more run directories"},
		{[]string{"report", reportFixtures + "/runs/a"}, 2, "--out is required"},
		{[]string{"report", filepath.Join(dir, "nope"), "--out", out}, 1, "does not exist; give the --junit-dir"},
		{[]string{"report", reportFixtures + "/bad/nojunit", "--out", out}, 1, "holds no junit*.xml"},
		{[]string{"report", reportFixtures + "/bad/malformed", "--out", out}, 1, "is not a readable JUnit file"},
		{[]string{"report", "diff", reportFixtures + "/runs/a"}, 2, "give two runs or reports"},
		{[]string{"report", "diff", reportFixtures + "/runs/a", reportFixtures + "/runs/a2", "--format", "xml"}, 2, `unknown --format "xml"`},
		{[]string{"report", "diff", reportFixtures + "/runs/a", reportFixtures + "/bad/malformed"}, 1, "is not a readable JUnit file"},
	} {
		code, _, stderr := runCaptured(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line containing %q", c.args, code, stderr, c.code, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q left %s behind", c.args, out)
		}
	}
}
