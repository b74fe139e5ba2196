// Package incluster is the conformance image's entrypoint: it runs
// skewproof's suites inside the cluster it runs in, with the pod's
// ServiceAccount, and honours the contracts of the two tools vendors run
// conformance images with.
//
// Hydrophone (sigs.k8s.io/hydrophone, pkg/conformance/deploy.go and
// pkg/conformance/client): the settings come as E2E_FOCUS, E2E_SKIP,
// E2E_EXTRA_ARGS, E2E_EXTRA_GINKGO_ARGS and E2E_DRYRUN; the results go to
// /tmp/results/e2e.log and /tmp/results/junit_01.xml; progress is counted
// from the "Will run X of Y specs" line of e2e.log and one "•" per finished
// spec after it; completion is the "Ginkgo ran N suite" line at the end of
// the container log; the container's exit status is the run's.
//
// Sonobuoy (package runner/sonobuoy): the results go to its results
// directory, packed into a tarball whose path the done file names, and
// progress is posted to the worker after each spec.
package incluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/runner/sonobuoy"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// The conformance image's files and limits (its environment's names are
// sonobuoy.EnvFocus and the rest, declared once for the plugin and here).
const (
	DefaultResultsDir   = "/tmp/results"
	JUnitFile           = "junit_01.xml"
	LogFile             = "e2e.log"
	serviceAccountDir   = "/var/run/secrets/kubernetes.io/serviceaccount"
	conformanceFocusAll = `\[Conformance\]`
	minFailingLifetime  = 15 * time.Second
)

// output is the entrypoint's output: the container log and e2e.log.
type output struct {
	mu  sync.Mutex
	w   io.Writer
	log *os.File
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Write(b)
}

func (o *output) printf(format string, args ...any) { fmt.Fprintf(o, format+"\n", args...) }

// Main runs the entrypoint and returns the exit status: 0 when every spec
// passed, deviated or was skipped, 1 otherwise.
func Main(ctx context.Context) int {
	start := time.Now()
	dir := DefaultResultsDir
	son := sonobuoy.Detected()
	if son {
		dir = sonobuoy.ResultsDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "skewproof: results directory %s: %v\n", dir, err)
		return 1
	}
	logf, err := os.Create(filepath.Join(dir, LogFile))
	if err != nil {
		fmt.Fprintf(os.Stderr, "skewproof: %v\n", err)
		return 1
	}
	defer func() { _ = logf.Close() }()
	out := &output{w: io.MultiWriter(os.Stdout, logf), log: logf}
	res, total, err := run(ctx, dir, out)
	if err != nil {
		// e2e.log must name the plan before anything else; an error before
		// the plan still gets a parseable log.
		out.printf("skewproof: %v", err)
	}
	c := reports.Count(res)
	passed, failed := c[skew.Pass]+c[skew.Deviation], c[skew.Fail]
	if err == nil {
		passed += c[skew.Flaky] // tolerated (--allow-flaky): the run did not fail
	} else {
		failed += c[skew.Flaky] // flaky is not conformant
	}
	out.printf("\nRan %d of %d Specs in %.3f seconds", passed+failed, total, time.Since(start).Seconds())
	status := 0
	if err != nil || failed > 0 {
		status = 1
		out.printf("FAIL! -- %d Passed | %d Failed | 0 Pending | %d Skipped (%d of the passed deviate from the KEP as documented; %d failed only once and passed on a retry)",
			passed, failed, c[skew.Skip], c[skew.Deviation], c[skew.Flaky])
	} else {
		out.printf("SUCCESS! -- %d Passed | 0 Failed | 0 Pending | %d Skipped (%d of the passed deviate from the KEP as documented)", passed, c[skew.Skip], c[skew.Deviation])
	}
	junit := filepath.Join(dir, JUnitFile)
	if _, err := os.Stat(junit); err != nil {
		// Hydrophone and Sonobuoy expect a report even when nothing ran.
		if err := reports.WriteJUnitFile(junit); err != nil {
			out.printf("skewproof: %v", err)
		}
	}
	if err != nil && failed == 0 {
		// Sonobuoy judges a plugin by its JUnit report alone, not by the
		// exit status, and counts an empty report as passed: a run that
		// failed without a failed spec reports one failed test case that
		// names the error.
		if err := addRunFailure(junit, err); err != nil {
			out.printf("skewproof: %v", err)
		}
	}
	if son {
		files := []string{LogFile}
		for _, f := range []string{JUnitFile, reports.RecordFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				files = append(files, f)
			}
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*-"+"*.log"))
		for _, l := range logs {
			if filepath.Base(l) != LogFile {
				files = append(files, filepath.Base(l))
			}
		}
		if tarball, err := sonobuoy.Done(dir, files); err != nil {
			out.printf("skewproof: telling Sonobuoy the results are done: %v", err)
			status = 1
		} else {
			out.printf("results for Sonobuoy: %s", tarball)
		}
	}
	if d := minFailingLifetime - time.Since(start); status != 0 && d > 0 {
		// Hydrophone (pkg/common/pod.go, CreatePod and CheckFailedPod)
		// takes a conformance container that terminated with "Error"
		// before it saw the pod leave Pending for a failed deployment and
		// fetches nothing: a run that fails within seconds (nothing
		// selected, bad settings) stays up long enough to be seen running.
		time.Sleep(d)
	}
	// Hydrophone waits for this line in the container log.
	out.printf("\nGinkgo ran 1 suite in %s", time.Since(start).Round(time.Millisecond))
	if status == 0 {
		out.printf("Test Suite Passed")
	} else {
		out.printf("Test Suite Failed")
	}
	return status
}

// RunFailureID is the id of the failed test case that stands for a run
// that failed without a failed spec.
const RunFailureID = "skewproof/run"

// addRunFailure appends to the JUnit report at path a suite "skewproof"
// with one failed test case whose failure is runErr.
func addRunFailure(path string, runErr error) error {
	suites, err := reports.ReadJUnitFiles(path)
	if err != nil {
		return err
	}
	suites = append(suites, reports.RunFailure("", RunFailureID, "the conformance run", runErr.Error()))
	return reports.WriteJUnitFile(path, suites...)
}

// run returns the results and the number of specs in the binary.
func run(ctx context.Context, dir string, out *output) (_ []reports.Result, total int, err error) {
	s, err := ReadSettings(os.Getenv)
	if err != nil {
		return nil, total, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, total, err
	}
	suiteBin, err := runner.FindSuiteBinary(exe)
	if err != nil {
		return nil, total, err
	}
	// The suites first: the binary declares them, and the plan selects by
	// them.
	decls, err := runner.Declarations(ctx, suiteBin)
	if err != nil {
		return nil, total, err
	}
	suites, err := runner.ResolveSuites(decls, s.Suites, s.Certify)
	if err != nil {
		return nil, total, fmt.Errorf("%s: %v", sonobuoy.EnvExtraArgs, err)
	}
	s.Suites = senv.Families(suites)
	kubeconfig, cs, err := inClusterKubeconfig()
	if err != nil {
		return nil, total, err
	}
	defer func() { _ = os.RemoveAll(filepath.Dir(kubeconfig)) }()
	if s.AgentImage == "" {
		if s.AgentImage, err = ownImage(ctx, cs); err != nil {
			return nil, total, fmt.Errorf("finding this pod's image for the node agent: %w (or pass --agent-image in %s)", err, sonobuoy.EnvExtraArgs)
		}
	}
	if s.Focus == conformanceFocusAll {
		out.printf("note: skewproof's specs are not [Conformance] specs; %s=%s selects none of them (leave it empty to run all)", sonobuoy.EnvFocus, s.Focus)
	}
	if len(s.Ignored) > 0 {
		out.printf("note: ignoring %s %q (the runner plans its own processes)", sonobuoy.EnvExtraGinkgoArgs, s.Ignored)
	}
	// The plan first: Hydrophone reads e2e.log for "Will run X of Y specs".
	env := append(os.Environ(), senv.Kubeconfig+"="+kubeconfig)
	junit := filepath.Join(dir, JUnitFile)
	var will int
	will, total, err = plan(ctx, suiteBin, s, env, junit)
	if err != nil {
		return nil, total, err
	}
	out.printf("Will run %d of %d specs", will, total)
	if v, err := cs.Discovery().ServerVersion(); err == nil {
		out.printf("kube-apiserver version: %s", v.GitVersion)
	}
	if will == 0 {
		return nil, total, fmt.Errorf("no spec selected (%s=%q, %s=%q, label filter %q)", sonobuoy.EnvFocus, s.Focus, sonobuoy.EnvSkip, s.Skip, s.LabelFilter)
	}
	if s.DryRun {
		return nil, total, dryRunDone(junit)
	}
	son := sonobuoy.NewProgress()
	var done int
	var failures []string
	p := progress.New(out)
	o := runner.Options{Name: s.Name, Kubeconfig: kubeconfig, Suites: s.Suites, SuiteBinary: suiteBin, Declarations: decls,
		LabelFilter: s.LabelFilter, Focus: s.Focus, Skip: s.Skip, JUnitDir: dir, JUnitName: JUnitFile,
		Parallel: true, Timeout: s.Timeout, FlakeAttempts: s.FlakeAttempts, AllowFlaky: s.AllowFlaky,
		AllowedNotReadyNodes: s.AllowedNotReadyNodes, Certify: s.Certify, AgentImage: s.AgentImage, AgentBinary: exe, Mode: "in-cluster",
		Command: append([]string{exe, "conformance-entrypoint"}, e2eEnv()...), Progress: p,
		OnSpec: func(r reports.Result) {
			done++
			if r.Verdict == skew.Fail || r.Verdict == skew.Flaky && !s.AllowFlaky {
				failures = append(failures, r.Name)
			}
			// One "•" per finished spec: Hydrophone counts them.
			out.printf("• %s", reports.ProgressLine(r))
			if err := son.Update(ctx, r.ID, will, done, failures); err != nil {
				out.printf("note: progress to Sonobuoy: %v", err)
			}
		}}
	res, err := runner.Run(ctx, o)
	if len(res.Results) > 0 {
		fmt.Fprintln(out)
		reports.WriteSummary(out, res.Results)
	}
	// Hydrophone downloads e2e.log and junit_01.xml only: the run record
	// goes into the log too, for 'skewproof bundle'.
	if res.Record != nil {
		if line, rerr := reports.RecordLogLine(*res.Record); rerr == nil {
			out.printf("%s", line)
		}
	}
	return res.Results, total, err
}

// e2eEnv is the E2E_* settings, recorded with the command.
func e2eEnv() []string {
	var out []string
	for _, k := range []string{sonobuoy.EnvFocus, sonobuoy.EnvSkip, sonobuoy.EnvExtraArgs, sonobuoy.EnvExtraGinkgoArgs, sonobuoy.EnvDryRun} {
		if v := os.Getenv(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}
