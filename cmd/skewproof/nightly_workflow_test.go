package main

// The GitHub Actions workflows of .github/workflows, linted with actionlint
// (a pinned module of go.mod, used as a library) in `make test`, and the
// contract between .github/workflows/nightly.yml and `skewproof matrix
// --format github`, whose output is the strategy matrix of its cluster job.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/skewproof/skewproof/skew"
)

const (
	repoRoot        = "../.."
	nightlyWorkflow = repoRoot + "/.github/workflows/nightly.yml"
)

// lintWorkflow lints one workflow file's content as actionlint's CLI would
// from the repository root (shellcheck on run: scripts when it is on PATH).
func lintWorkflow(t *testing.T, path string, content []byte) []*actionlint.Error {
	t.Helper()
	opts := &actionlint.LinterOptions{LogWriter: io.Discard, WorkingDir: repoRoot}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	}
	l, err := actionlint.NewLinter(io.Discard, opts)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := actionlint.NewProject(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, content, proj)
	if err != nil {
		t.Fatalf("actionlint %s: %v", path, err)
	}
	return errs
}

func formatLintErrors(errs []*actionlint.Error) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "%s:%d:%d: %s [%s]\n", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
	return b.String()
}

func TestWorkflowsActionlint(t *testing.T) {
	files, err := filepath.Glob(repoRoot + "/.github/workflows/*.y*ml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, nightlyWorkflow) {
		t.Fatalf("%s missing (workflows: %v)", nightlyWorkflow, files)
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Logf("shellcheck not on PATH: run: scripts are not checked")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if errs := lintWorkflow(t, f, b); len(errs) > 0 {
			t.Errorf("actionlint: %d error(s) in %s:\n%s", len(errs), f, formatLintErrors(errs))
		}
	}
}

// TestWorkflowsActionlintCatchesBreakage lints broken copies of the nightly
// workflow: each must be reported, so the check above can fail. (A matrix
// key the matrix lacks is not among them: the matrix comes from fromJSON,
// which actionlint cannot type; TestNightlyMatrixContract checks that.)
func TestWorkflowsActionlintCatchesBreakage(t *testing.T) {
	orig, err := os.ReadFile(nightlyWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"undefined job output", "fromJSON(needs.plan.outputs.matrix)", "fromJSON(needs.plan.outputs.matrices)", `property "matrices" is not defined`},
		{"needs of a missing job", "needs: plan\n", "needs: plann\n", `job "cluster" needs job "plann" which does not exist`},
		{"undefined step output", "steps.leg.outputs.artifact }}\n          path:", "steps.legs.outputs.artifact }}\n          path:", `property "legs" is not defined`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(orig), tc.old) {
				t.Fatalf("%s no longer contains %q: update this case", nightlyWorkflow, tc.old)
			}
			broken := strings.Replace(string(orig), tc.old, tc.new, 1)
			errs := lintWorkflow(t, nightlyWorkflow, []byte(broken))
			got := formatLintErrors(errs)
			if !strings.Contains(got, tc.want) {
				t.Errorf("actionlint did not report %q; reported:\n%s", tc.want, got)
			}
			t.Logf("reported:\n%s", got)
		})
	}
}

// matrixKeys returns the keys of matrix.<key> the workflow's expressions
// read (not steps.matrix.…, nor matrix.md in a script).
func matrixKeys(wf string) []string {
	var keys []string
	for _, expr := range regexp.MustCompile(`\$\{\{(.*?)\}\}`).FindAllStringSubmatch(wf, -1) {
		for _, m := range regexp.MustCompile(`(?:^|[^.\w-])matrix\.([A-Za-z_][A-Za-z0-9_-]*)(\s*\|\|)?`).FindAllStringSubmatch(expr[1], -1) {
			// matrix.K || 'default': optional, the workflow has a fallback.
			if m[2] == "" && !slices.Contains(keys, m[1]) {
				keys = append(keys, m[1])
			}
		}
	}
	return keys
}

// matrixContract lists what in a `matrix --format github` output the
// workflow wf cannot use: not one line for $GITHUB_OUTPUT, not a JSON object
// with a non-empty include array, an entry without a matrix.<key> the
// workflow reads, a cluster name derived from an entry that `run --name`
// rejects.
func matrixContract(wf, out string) []string {
	var problems []string
	keys := matrixKeys(wf)
	if len(keys) == 0 {
		problems = append(problems, "the workflow reads no matrix.<key>")
	}
	line := strings.TrimSuffix(out, "\n")
	if strings.Contains(line, "\n") {
		return append(problems, "not one line (the workflow writes matrix=<output> to $GITHUB_OUTPUT): "+out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return append(problems, fmt.Sprintf("not a JSON object: %v: %s", err, line))
	}
	include, ok := m["include"].([]any)
	if !ok || len(include) == 0 {
		return append(problems, "no non-empty include array: "+line)
	}
	for i, e := range include {
		entry, ok := e.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("include[%d] is not an object: %v", i, e))
			continue
		}
		for _, k := range keys {
			if s, ok := entry[k].(string); !ok || s == "" {
				problems = append(problems, fmt.Sprintf("include[%d] has no string %q, which the workflow reads as matrix.%s: %v", i, k, k, entry))
			}
		}
		if a, ok := entry["apiserver"].(string); ok {
			// The workflow's leg step: cluster=nightly-${APISERVER//./-}.
			if err := validName("nightly-" + strings.ReplaceAll(a, ".", "-")); err != nil {
				problems = append(problems, fmt.Sprintf("include[%d]: the workflow's cluster name: %v", i, err))
			}
		}
	}
	return problems
}

// TestNightlyMatrixContract runs `skewproof matrix --format github` on the
// workflow's default range and checks the workflow can use its output
// (matrixContract); then that a workflow reading a key the output lacks is
// caught, since actionlint cannot type a fromJSON matrix.
func TestNightlyMatrixContract(t *testing.T) {
	b, err := os.ReadFile(nightlyWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	wf := string(b)

	// The default range: the dispatch input's default and the fallback of
	// a scheduled run must agree.
	def := regexp.MustCompile(`(?m)^\s+default: "([^"]+)"`).FindStringSubmatch(wf)
	fallback := regexp.MustCompile(`inputs\.apiserver \|\|.*\|\| '([^']+)' \}\}`).FindStringSubmatch(wf)
	if def == nil || fallback == nil {
		t.Fatalf("no default range in %s (input default %v, schedule fallback %v)", nightlyWorkflow, def, fallback)
	}
	if def[1] != fallback[1] {
		t.Fatalf("input default %q != scheduled fallback %q", def[1], fallback[1])
	}
	const clusterName = `echo "cluster=nightly-${APISERVER//./-}"`
	if !strings.Contains(wf, clusterName) {
		t.Fatalf("the workflow no longer derives the cluster name with %s: update matrixContract", clusterName)
	}
	if keys := matrixKeys(wf); !slices.Contains(keys, "apiserver") || !slices.Contains(keys, "kubelets") {
		t.Fatalf("matrix keys read by the workflow = %v, want apiserver and kubelets among them", keys)
	}

	out := withServedCache(t)
	if code := run([]string{"matrix", "--apiserver", def[1], "--format", "github"}); code != 0 {
		t.Fatalf("matrix --apiserver %s --format github: exit %d", def[1], code)
	}
	for _, p := range matrixContract(wf, out.String()) {
		t.Error(p)
	}
	// The weekly schedule runs the history preset; its legs name their suites.
	weekly := regexp.MustCompile(`github\.event\.schedule == '([^']+)' && '` + skew.HistoryPreset + `'`).FindStringSubmatch(wf)
	if weekly == nil || !strings.Contains(wf, `- cron: "`+weekly[1]+`"`) {
		t.Fatalf("no schedule of %s runs the %s preset (%v)", nightlyWorkflow, skew.HistoryPreset, weekly)
	}
	out.Reset()
	if code := run([]string{"matrix", "--apiserver", skew.HistoryPreset, "--format", "github"}); code != 0 {
		t.Fatalf("matrix --apiserver %s --format github: exit %d", skew.HistoryPreset, code)
	}
	for _, p := range matrixContract(wf, out.String()) {
		t.Error(p)
	}
	if !strings.Contains(wf, "${{ matrix.suites ||") || !strings.Contains(out.String(), `"suites":"seccomp"`) {
		t.Errorf("the history legs' suites do not reach the workflow: %s", out.String())
	}

	broken := strings.Replace(wf, "${{ matrix.kubelets }}", "${{ matrix.kubelet }}", 1)
	if broken == wf {
		t.Fatal("the workflow has no ${{ matrix.kubelets }}: update this test")
	}
	problems := matrixContract(broken, out.String())
	if len(problems) == 0 || !strings.Contains(problems[0], `no string "kubelet"`) {
		t.Errorf("a workflow reading matrix.kubelet was not caught: %v", problems)
	}
}
