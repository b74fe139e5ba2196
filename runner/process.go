package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/runner/schedule"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// suiteRun is what the processes of one suite produced.
type suiteRun struct {
	name    string
	jobs    []schedule.Job
	results [][]reports.Result // per process, as its result lines came
	// planned are the specs each process was started to run (the dry
	// run's list, by the process's label filter): each must report.
	planned [][]schedule.Spec
	logs    []string
	tails   []string // the last lines of each process's output
	started []bool
	errs    []error
	left    int // processes still running
	start   time.Time
}

// runProcesses runs the suites' processes (each with runProcess) as the
// schedule lays them out, each as soon as the jobs it waits for have
// finished, and returns one merged result per suite that ran (in the order
// of o.Suites), the logs (a glob per suite) and the processes' errors. On
// interrupt no further process starts.
func (o Options) runProcesses(ctx context.Context, p *progress.Progress, junitDir string, env []string) ([]reports.Suite, []string, error) {
	runs, jobs, err := o.planSuites(ctx, junitDir, env)
	if err != nil {
		return nil, nil, err
	}
	o.startSuites(ctx, p, runs, jobs, env)
	return o.mergeSuites(runs, junitDir)
}

// planSuites lays out the processes of each suite (runner/schedule, from
// the labels of the specs a dry run lists) and names their logs.
// Every process's planned specs are noted, so that a spec that never
// reports (its process killed, timed out or crashed) is a failure.
func (o Options) planSuites(ctx context.Context, junitDir string, env []string) (map[string]*suiteRun, []schedule.Job, error) {
	specs, err := o.discover(ctx, junitDir, env)
	if err != nil {
		return nil, nil, err
	}
	var labels []schedule.SpecLabels
	for _, s := range specs {
		labels = append(labels, s.Labels)
	}
	jobs := schedule.OneAtATime(schedule.Plan(o.Suites, o.Parallel, labels), o.slowNodes...)
	runs := map[string]*suiteRun{}
	for _, j := range jobs {
		r := runs[j.Suite]
		if r == nil {
			r = &suiteRun{name: j.Suite}
			runs[j.Suite] = r
		}
		r.jobs = append(r.jobs, j)
	}
	for name, r := range runs {
		r.results, r.logs = make([][]reports.Result, len(r.jobs)), make([]string, len(r.jobs))
		r.started, r.errs, r.left = make([]bool, len(r.jobs)), make([]error, len(r.jobs)), len(r.jobs)
		r.planned, r.tails = make([][]schedule.Spec, len(r.jobs)), make([]string, len(r.jobs))
		for i, j := range r.jobs {
			if r.planned[i], err = j.Of(specs); err != nil {
				return nil, nil, err
			}
			r.logs[i] = filepath.Join(junitDir, name+"-"+o.Name+".log")
			if len(r.jobs) > 1 {
				r.logs[i] = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-%s.log", name, o.Name, j.Name))
			}
		}
	}
	return runs, jobs, nil
}

// startSuites runs every job's process, each once the jobs it waits for
// are done, and returns when all have ended.
func (o Options) startSuites(ctx context.Context, p *progress.Progress, runs map[string]*suiteRun, jobs []schedule.Job, env []string) {
	// done[k] closes when job k's process has ended; specsDone[k] when its
	// specs are (markSpecsDone[k]: at its SpecsDoneLine, else as it ends).
	done, specsDone, markSpecsDone := map[string]chan struct{}{}, map[string]chan struct{}{}, map[string]func(){}
	for _, j := range jobs {
		k, ch := j.Key(), make(chan struct{})
		done[k], specsDone[k], markSpecsDone[k] = make(chan struct{}), ch, sync.OnceFunc(func() { close(ch) })
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range o.Suites {
		r := runs[name]
		if r == nil {
			continue // the run selects no spec of it
		}
		if len(r.jobs) > 1 || r.jobs[0].After == nil && r.jobs[0].AfterSpecs == nil {
			p.Step("running the %s suite in %d process(es)", name, len(r.jobs))
		}
		for i, j := range r.jobs {
			args := append(schedule.SuiteArgs(name, schedule.Select(o.LabelFilter, j.Filter), o.Focus, o.Skip), timeoutArgs(o.Timeout)...)
			if o.FlakeAttempts > 1 {
				// A failed spec runs again; a pass then is reported flaky.
				args = append(args, "-ginkgo.flake-attempts", strconv.Itoa(o.FlakeAttempts))
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(done[j.Key()])
				defer markSpecsDone[j.Key()]()
				waitFor(ctx, done, j.After)
				waitFor(ctx, specsDone, j.AfterSpecs)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				if len(r.jobs) == 1 && (j.After != nil || j.AfterSpecs != nil) {
					p.Step("running the %s suite in 1 process(es)", name)
				}
				if r.start.IsZero() {
					r.start = time.Now()
				}
				r.started[i] = true
				mu.Unlock()
				results, tail, err := o.runProcess(ctx, r.logs[i], args, env, markSpecsDone[j.Key()])
				mu.Lock()
				defer mu.Unlock()
				r.results[i], r.tails[i], r.errs[i] = results, tail, err
				if r.left--; r.left == 0 {
					p.Step("%s suite finished in %.1fs", r.name, time.Since(r.start).Seconds())
				}
			}()
		}
	}
	wg.Wait()
}

// mergeSuites gathers each suite's results from its processes.
func (o Options) mergeSuites(runs map[string]*suiteRun, junitDir string) ([]reports.Suite, []string, error) {
	var out []reports.Suite
	var logs []string
	var errs []error
	for _, name := range o.Suites {
		r := runs[name]
		if r == nil {
			continue
		}
		started := false
		merged := reports.Suite{Name: name, Cluster: o.Name, Timestamp: r.start}
		var unexplained []error
		for i := range r.jobs {
			started = started || r.started[i]
			unreported := r.unreported(i)
			merged.Results = append(merged.Results, r.results[i]...)
			merged.Results = append(merged.Results, unreported...)
			if r.errs[i] != nil && !failsAmong(r.results[i]) && len(unreported) == 0 {
				// Not the exit status of failed specs (Ginkgo exits 1 for
				// those), nor a process whose unreported specs say how it
				// ended: a failure outside the specs.
				unexplained = append(unexplained, fmt.Errorf("%s/%s: %w", name, r.jobs[i].Name, r.errs[i]))
			}
		}
		if !started {
			continue // interrupted before it started
		}
		logGlob := r.logs[0]
		if len(r.jobs) > 1 {
			logGlob = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-*.log", name, o.Name))
		}
		logs = append(logs, logGlob)
		errs = append(errs, unexplained...)
		out = append(out, merged)
	}
	return out, logs, errors.Join(errs...)
}

// unreported are the failures that stand for the specs process i was
// planned to run and never reported: killed (a timeout, the OOM killer,
// kill -9), crashed outside a spec, or never started. A JUnit reader
// sees each as a failed test case, with how the process ended and the
// last lines of its log.
func (r *suiteRun) unreported(i int) []reports.Result {
	seen := map[string]bool{}
	for _, res := range r.results[i] {
		seen[res.Name] = true
	}
	var out []reports.Result
	for _, s := range r.planned[i] {
		if seen[s.Text] {
			continue
		}
		why := fmt.Sprintf("its suite process (%s/%s) ", r.name, r.jobs[i].Name)
		switch {
		case !r.started[i]:
			why += "never started (the run was interrupted)"
		case r.errs[i] != nil:
			why += "ended with " + r.errs[i].Error()
		default:
			why += "ended with exit status 0 without reporting it"
		}
		if r.tails[i] != "" {
			why += fmt.Sprintf("; the last lines of its log (%s):\n%s", filepath.Base(r.logs[i]), r.tails[i])
		}
		out = append(out, reports.Unreported(s.Text, s.Labels.Node(), why))
	}
	return out
}

// failsAmong says whether a process reported a spec that failed, which
// explains its exit status.
func failsAmong(rs []reports.Result) bool {
	for _, r := range rs {
		if r.Verdict == skew.Fail || r.Verdict == skew.Flaky {
			return true
		}
	}
	return false
}

// processGrace is how long a suite process may run past its Ginkgo
// timeout: Ginkgo interrupts the spec at the timeout, reports it and runs
// the clean-up (the suites' SynchronizedAfterSuite takes up to 4 minutes);
// Go's test alarm, which kills the process without a report, only backs
// that up.
const processGrace = 6 * time.Minute

// timeoutArgs bound a suite process: Ginkgo's own timeout, so that the
// spec it interrupts is reported (a failure), with Go's test alarm behind
// it.
func timeoutArgs(d time.Duration) []string {
	return []string{"-ginkgo.timeout", d.String(), "-test.timeout", (d + processGrace).String()}
}

// waitFor returns when the channels of keys are closed or ctx is done.
func waitFor(ctx context.Context, chs map[string]chan struct{}, keys []string) {
	for _, k := range keys {
		select {
		case <-chs[k]:
		case <-ctx.Done():
		}
	}
}

// runProcess runs the e2e binary and returns the results of its specs,
// read from its result lines (suites/env.ResultLinePrefix), the one
// channel of its results: it reports each to OnSpec as it comes, calls
// specsDone when the process says its specs are done (senv.SpecsDoneLine),
// and keeps the full output in logPath. On interrupt the process gets
// SIGINT, so that Ginkgo runs its cleanup (namespaces).
func (o Options) runProcess(ctx context.Context, logPath string, args, env []string, specsDone func()) ([]reports.Result, string, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.CommandContext(ctx, o.SuiteBinary, args...)
	cmd.Env = suiteEnv(env)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	// Should skewproof be killed (SIGKILL), the suite still cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	var results []reports.Result
	var tail []string // the last lines that are not result lines
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if r, ok := senv.ParseResultLine(line); ok {
				results = append(results, r)
				o.OnSpec(r)
			} else if strings.Contains(line, senv.SpecsDoneLine) {
				specsDone()
			} else if strings.TrimSpace(line) != "" {
				if tail = append(tail, line); len(tail) > tailLines {
					tail = tail[1:]
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	err = cmd.Run()
	_ = pw.Close()
	<-done
	if ctx.Err() != nil {
		return results, strings.Join(tail, "\n"), ctx.Err()
	}
	return results, strings.Join(tail, "\n"), err
}

// passedEnv are the variables of skewproof's own environment a suite
// process gets: what finds programs and temporary space, the locale, and
// how the Docker client reaches the daemon (node access). Nothing else is
// inherited: a SKEWPROOF_* variable left in the shell (SKEWPROOF_WORKERS
// would narrow the nodes the kubelet rules run on) must not change what a
// run checks without saying so; the run plan (senv.PlanFile) says it all.
var passedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LC_ALL", "TZ",
	"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY",
	// In the conformance image's pod: where the API server is.
	"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}

// suiteEnv is the environment of a suite process: passedEnv from this
// process's, then the runner's own settings (env).
func suiteEnv(env []string) []string {
	var out []string
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			out = append(out, k+"="+v)
		}
	}
	return append(out, env...)
}

// tailLines is how many of a process's last lines a failure quotes.
const tailLines = 12
