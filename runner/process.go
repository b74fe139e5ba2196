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

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/reports"
	senv "github.com/skewproof/skewproof/suites/env"
)

// TestName is the Go test function of the e2e binary.
const TestName = "TestE2E"

// partitioned lists the suites whose specs are declared per node (API
// rules once, kubelet rules per worker), so that each worker's specs run
// in processes of their own.
var partitioned = map[string]bool{"seccomp": true, "apparmor": true}

// shard is one process's share of a worker's kubelet specs of a suite.
type shard struct{ name, filter string }

// shards split one worker's kubelet specs of a suite into processes that run
// on that node at the same time: its specs are independent (each has a
// namespace, pods and a profile name of its own) and most of their time is
// spent waiting for the kubelet (pod start, back-off between restarts).
// Each shard takes the specs its filter selects that no earlier shard took;
// a last shard, "rest", takes every spec left, so that no spec is lost when
// one is added. seccomp/failure/row-4 has a process of its own: it waits for
// the garbage collector (its profile's node statuses), and the profiles
// suite's scale spec starts only after it (see plan).
var shards = map[string][]shard{
	"seccomp": {
		{name: "row-4", filter: "seccomp-failure-row-4"},
		{name: "failure", filter: "failure || update"},
	},
}

// gcBench is the label of the spec that hands the garbage collector
// thousands of node statuses at once (profiles/node-status/scale). The
// collector works its queue in order, so a spec that waits for it to remove
// a few objects within a time limit must not run while that backlog
// drains: the bench runs in a process of its own, after the specs of the
// rest of the profiles suite and of seccomp/failure/row-4 (gcWaiters), not
// for those processes' clean-up (the profiles suite's deletes its agent's
// namespace and waits for it to go, ~20 s). That clean-up waits for the
// collector too (its profiles' node statuses, within 2 minutes), but it is
// over long before the bench deletes anything: the bench first writes its
// node statuses, for tens of seconds.
const gcBench = "profiles-node-status-scale"

// job is one suite process: its suite, its name within the suite ("all",
// "api", a worker, a worker's shard, "main", "scale"), the Ginkgo label
// filter of its part, the jobs that must have finished before it starts
// (keys), and the jobs whose specs must have finished (afterSpecs: their
// process printed reports.SpecsDoneLine, or ended) — their clean-up may
// still be running.
type job struct {
	suite, name, filter string
	after, afterSpecs   []string
}

func (j job) key() string { return j.suite + "/" + j.name }

// gcWaiter says whether a job runs specs that wait for the garbage
// collector within a time limit (gcBench waits for them).
func (j job) gcWaiter() bool {
	return j.suite == "profiles" && j.name == "main" || j.suite == "seccomp" && strings.HasSuffix(j.name, ".row-4")
}

// plan lays out the suite processes of a run. Without parallel, every suite
// runs in one process, one suite after the other. With it, the suites run
// at the same time: the API server rules of the seccomp and AppArmor suites
// in one process each, each worker's kubelet rules in processes of their
// own (shards), and the profiles suite in two processes, the scale bench
// after the other (gcBench). They share the nodes without touching each
// other's objects: every spec has its own namespace, the seccomp and
// AppArmor specs use the fixture profiles and static pods of the fixtures
// namespace (row 4 a profile name per node), the profiles suite its own
// agent, namespace and profile names, and its fault injection a directory
// of its own namespace.
func plan(suites []string, parallel bool, workers []string) []job {
	var jobs []job
	if !parallel || len(workers) == 0 {
		// One after the other: within one process the specs of a suite run
		// one at a time, so the scale bench never overlaps a wait for the
		// garbage collector.
		for i, s := range suites {
			j := job{suite: s, name: "all"}
			if i > 0 {
				j.after = []string{jobs[i-1].key()}
			}
			jobs = append(jobs, j)
		}
		return jobs
	}
	for _, s := range suites {
		switch {
		case partitioned[s]:
			jobs = append(jobs, job{suite: s, name: "api", filter: "api"})
			for _, w := range workers {
				node := "kubelet && node: containsAny " + w
				if len(shards[s]) == 0 {
					jobs = append(jobs, job{suite: s, name: w, filter: node})
					continue
				}
				var taken []string
				for _, sh := range shards[s] {
					f := sh.filter
					if len(taken) > 0 {
						f = Select(f, "!("+strings.Join(taken, " || ")+")")
					}
					jobs = append(jobs, job{suite: s, name: w + "." + sh.name, filter: Select(node, f)})
					taken = append(taken, "("+sh.filter+")")
				}
				jobs = append(jobs, job{suite: s, name: w + ".rest", filter: Select(node, "!("+strings.Join(taken, " || ")+")")})
			}
		case s == "profiles":
			jobs = append(jobs, job{suite: s, name: "main", filter: "!" + gcBench}, job{suite: s, name: "scale", filter: gcBench})
		default:
			jobs = append(jobs, job{suite: s, name: "all"})
		}
	}
	for i := range jobs {
		if jobs[i].suite == "profiles" && jobs[i].name == "scale" {
			for _, w := range jobs {
				if w.gcWaiter() {
					jobs[i].afterSpecs = append(jobs[i].afterSpecs, w.key())
				}
			}
		}
	}
	return jobs
}

// Select joins Ginkgo label filters (the selections of a run) with &&,
// leaving out empty ones.
func Select(filters ...string) string {
	var parts []string
	for _, f := range filters {
		if f != "" {
			parts = append(parts, "("+f+")")
		}
	}
	if len(parts) == 1 {
		return strings.TrimSuffix(strings.TrimPrefix(parts[0], "("), ")")
	}
	return strings.Join(parts, " && ")
}

// SuiteArgs are the e2e binary's arguments for the specs of one suite
// (its family label) and a selection.
func SuiteArgs(suite, labelFilter, focus, skip string) []string {
	args := []string{"-test.run", "^" + TestName + "$", "-test.v", "-ginkgo.no-color", "-ginkgo.v",
		"-ginkgo.label-filter", Select(suite, labelFilter)}
	if focus != "" {
		args = append(args, "-ginkgo.focus", focus)
	}
	if skip != "" {
		args = append(args, "-ginkgo.skip", skip)
	}
	return args
}

// suiteRun is what the processes of one suite produced.
type suiteRun struct {
	name    string
	jobs    []job
	files   []string // per-process JUnit files
	logs    []string
	started []bool
	errs    []error
	left    int // processes still running
	start   time.Time
}

// runSuites runs the suites' processes as plan lays them out, each as soon
// as the jobs it waits for have finished, and returns one merged result per
// suite that ran (in the order of o.Suites), the logs (a glob per suite)
// and the processes' errors. On interrupt no further process starts.
func (o Options) runSuites(ctx context.Context, p *clusters.Progress, junitDir string, workers, env []string) ([]reports.Suite, []string, error) {
	jobs := plan(o.Suites, o.Parallel, workers)
	runs := map[string]*suiteRun{}
	for _, j := range jobs {
		r := runs[j.suite]
		if r == nil {
			r = &suiteRun{name: j.suite}
			runs[j.suite] = r
		}
		r.jobs = append(r.jobs, j)
	}
	// done[k] closes when job k's process has ended; specsDone[k] when its
	// specs are (markSpecsDone[k]: at its SpecsDoneLine, else as it ends).
	done, specsDone, markSpecsDone := map[string]chan struct{}{}, map[string]chan struct{}{}, map[string]func(){}
	for _, j := range jobs {
		k, ch := j.key(), make(chan struct{})
		done[k], specsDone[k], markSpecsDone[k] = make(chan struct{}), ch, sync.OnceFunc(func() { close(ch) })
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range o.Suites {
		r := runs[name]
		r.files, r.logs = make([]string, len(r.jobs)), make([]string, len(r.jobs))
		r.started, r.errs, r.left = make([]bool, len(r.jobs)), make([]error, len(r.jobs)), len(r.jobs)
		for i, j := range r.jobs {
			r.files[i] = filepath.Join(junitDir, fmt.Sprintf("junit-%s.%s.xml", o.Name, name))
			r.logs[i] = filepath.Join(junitDir, name+"-"+o.Name+".log")
			if len(r.jobs) > 1 {
				r.files[i] = filepath.Join(junitDir, fmt.Sprintf("junit-%s.%s.part-%s.xml", o.Name, name, j.name))
				r.logs[i] = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-%s.log", name, o.Name, j.name))
			}
			_ = os.Remove(r.files[i])
		}
		if len(r.jobs) > 1 || r.jobs[0].after == nil && r.jobs[0].afterSpecs == nil {
			p.Step("running the %s suite in %d process(es)", name, len(r.jobs))
		}
		for i, j := range r.jobs {
			args := append(SuiteArgs(name, Select(o.LabelFilter, j.filter), o.Focus, o.Skip), "-test.timeout", o.Timeout.String())
			if o.FlakeAttempts > 1 {
				// A failed spec runs again; a pass then is reported flaky.
				args = append(args, "-ginkgo.flake-attempts", strconv.Itoa(o.FlakeAttempts))
			}
			wg.Add(1)
			go func(r *suiteRun, i int, j job, args []string) {
				defer wg.Done()
				defer close(done[j.key()])
				defer markSpecsDone[j.key()]()
				waitFor(ctx, done, j.after)
				waitFor(ctx, specsDone, j.afterSpecs)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				if len(r.jobs) == 1 && (j.after != nil || j.afterSpecs != nil) {
					p.Step("running the %s suite in 1 process(es)", name)
				}
				if r.start.IsZero() {
					r.start = time.Now()
				}
				r.started[i] = true
				mu.Unlock()
				err := o.runProcess(ctx, r.logs[i], args, append([]string{senv.JUnit + "=" + r.files[i]}, env...), markSpecsDone[j.key()])
				mu.Lock()
				defer mu.Unlock()
				r.errs[i] = err
				if r.left--; r.left == 0 {
					p.Step("%s suite finished in %.1fs", r.name, time.Since(r.start).Seconds())
				}
			}(r, i, j, args)
		}
	}
	wg.Wait()
	var out []reports.Suite
	var logs []string
	var errs []error
	for _, name := range o.Suites {
		r := runs[name]
		var files []string
		for i := range r.jobs {
			if r.started[i] {
				files = append(files, r.files[i])
			}
		}
		if len(files) == 0 {
			continue // interrupted before it started
		}
		logGlob := r.logs[0]
		if len(r.jobs) > 1 {
			logGlob = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-*.log", name, o.Name))
		}
		logs = append(logs, logGlob)
		suiteErr := errors.Join(r.errs...)
		read, err := reports.ReadJUnitFiles(files...)
		if err != nil {
			errs = append(errs, suiteErr, fmt.Errorf("the %s suite wrote no report (log: %s): %w", name, logGlob, err))
			continue
		}
		errs = append(errs, suiteErr)
		merged := reports.Suite{Name: name, Cluster: o.Name, Timestamp: r.start}
		for _, s := range read {
			merged.Results = append(merged.Results, s.Results...)
		}
		for _, f := range files {
			_ = os.Remove(f)
		}
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

// runProcess runs the e2e binary, reports each finished spec to OnSpec,
// calls specsDone when the process says its specs are done
// (reports.SpecsDoneLine), and keeps the full output in logPath. On
// interrupt the process gets SIGINT, so that Ginkgo runs its cleanup
// (namespaces).
func (o Options) runProcess(ctx context.Context, logPath string, args, env []string, specsDone func()) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
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
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if r, ok := reports.ParseProgress(line); ok {
				o.OnSpec(r)
			} else if strings.Contains(line, reports.SpecsDoneLine) {
				specsDone()
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	err = cmd.Run()
	_ = pw.Close()
	<-done
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// JobFilters are the Ginkgo label filters of the suite processes a run
// starts (see plan), by process ("suite/name"): what each process is given
// with -ginkgo.label-filter when the run selects nothing further. The
// suites' tests check with them that the processes share out every spec
// exactly once.
func JobFilters(suites []string, parallel bool, workers []string) map[string]string {
	out := map[string]string{}
	for _, j := range plan(suites, parallel, workers) {
		out[j.key()] = Select(j.suite, j.filter)
	}
	return out
}
