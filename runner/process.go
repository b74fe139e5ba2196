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
	senv "github.com/skewproof/skewproof/suites/env"
)

// job is one suite process (schedule.Job).
type job = schedule.Job

// suiteRun is what the processes of one suite produced.
type suiteRun struct {
	name    string
	jobs    []job
	results [][]reports.Result // per process, as its result lines came
	logs    []string
	started []bool
	errs    []error
	left    int // processes still running
	start   time.Time
}

// runSuites runs the suites' processes as the schedule lays them out, each
// as soon as the jobs it waits for have finished, and returns one merged
// result per suite that ran (in the order of o.Suites), the logs (a glob
// per suite) and the processes' errors. On interrupt no further process
// starts.
func (o Options) runSuites(ctx context.Context, p *progress.Progress, junitDir string, env []string) ([]reports.Suite, []string, error) {
	runs, jobs, err := o.planSuites(ctx, junitDir, env)
	if err != nil {
		return nil, nil, err
	}
	o.startSuites(ctx, p, runs, jobs, env)
	return o.mergeSuites(runs, junitDir)
}

// planSuites lays out the processes of each suite (runner/schedule, from
// the labels of the specs a dry run lists) and names their logs.
func (o Options) planSuites(ctx context.Context, junitDir string, env []string) (map[string]*suiteRun, []job, error) {
	var specs []schedule.SpecLabels
	if o.Parallel {
		var err error
		if specs, err = o.discover(ctx, junitDir, env); err != nil {
			return nil, nil, err
		}
	}
	jobs := schedule.Plan(o.Suites, o.Parallel, specs)
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
		for i, j := range r.jobs {
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
func (o Options) startSuites(ctx context.Context, p *progress.Progress, runs map[string]*suiteRun, jobs []job, env []string) {
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
			args := append(schedule.SuiteArgs(name, schedule.Select(o.LabelFilter, j.Filter), o.Focus, o.Skip), "-test.timeout", o.Timeout.String())
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
				results, err := o.runProcess(ctx, r.logs[i], args, env, markSpecsDone[j.Key()])
				mu.Lock()
				defer mu.Unlock()
				r.results[i], r.errs[i] = results, err
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
		for i := range r.jobs {
			started = started || r.started[i]
			merged.Results = append(merged.Results, r.results[i]...)
		}
		if !started {
			continue // interrupted before it started
		}
		logGlob := r.logs[0]
		if len(r.jobs) > 1 {
			logGlob = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-*.log", name, o.Name))
		}
		logs = append(logs, logGlob)
		errs = append(errs, r.errs...)
		out = append(out, merged)
	}
	return out, logs, errors.Join(errs...)
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
func (o Options) runProcess(ctx context.Context, logPath string, args, env []string, specsDone func()) ([]reports.Result, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.CommandContext(ctx, o.SuiteBinary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	// Should skewproof be killed (SIGKILL), the suite still cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	var results []reports.Result
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
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	err = cmd.Run()
	_ = pw.Close()
	<-done
	if ctx.Err() != nil {
		return results, ctx.Err()
	}
	return results, err
}
