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
// in a process of their own.
var partitioned = map[string]bool{"seccomp": true, "apparmor": true}

// partition is one suite process: a name and a Ginkgo label filter.
type partition struct{ name, filter string }

// partitions splits a suite: the API server rules in one process and each
// worker's kubelet rules in another, so the workers are exercised
// concurrently (specs of one node stay sequential; failure row 4 changes a
// node's files).
func partitions(parallel bool, workers []string) []partition {
	if !parallel || len(workers) == 0 {
		return []partition{{name: "all"}}
	}
	parts := []partition{{name: "api", filter: "api"}}
	for _, w := range workers {
		parts = append(parts, partition{name: w, filter: "kubelet && node: containsAny " + w})
	}
	return parts
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

// runOne runs one suite, the seccomp and AppArmor suites split into
// concurrent processes (API rules, then each worker's kubelet rules), and
// returns its results.
func (o Options) runOne(ctx context.Context, p *clusters.Progress, name, junitDir string, workers, env []string) ([]reports.Suite, string, error) {
	logPath := filepath.Join(junitDir, name+"-"+o.Name+".log")
	parts := []partition{{name: "all"}}
	if partitioned[name] {
		parts = partitions(o.Parallel, workers)
	}
	start := time.Now()
	p.Step("running the %s suite in %d process(es)", name, len(parts))
	errs := make([]error, len(parts))
	files := make([]string, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		files[i] = filepath.Join(junitDir, fmt.Sprintf("junit-%s.%s.xml", o.Name, name))
		plog := logPath
		if len(parts) > 1 {
			files[i] = filepath.Join(junitDir, fmt.Sprintf("junit-%s.%s.part-%s.xml", o.Name, name, part.name))
			plog = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-%s.log", name, o.Name, part.name))
		}
		_ = os.Remove(files[i])
		args := append(SuiteArgs(name, Select(o.LabelFilter, part.filter), o.Focus, o.Skip), "-test.timeout", o.Timeout.String())
		if o.FlakeAttempts > 1 {
			// A failed spec runs again; a pass then is reported flaky.
			args = append(args, "-ginkgo.flake-attempts", strconv.Itoa(o.FlakeAttempts))
		}
		wg.Add(1)
		go func(i int, plog string) {
			defer wg.Done()
			errs[i] = o.runProcess(ctx, plog, args, append([]string{senv.JUnit + "=" + files[i]}, env...))
		}(i, plog)
	}
	wg.Wait()
	p.Step("%s suite finished in %.1fs", name, time.Since(start).Seconds())
	logGlob := logPath
	if len(parts) > 1 {
		logGlob = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-*.log", name, o.Name))
	}
	suiteErr := errors.Join(errs...)
	read, err := reports.ReadJUnitFiles(files...)
	if err != nil {
		return nil, logGlob, errors.Join(suiteErr, fmt.Errorf("the %s suite wrote no report (log: %s): %w", name, logGlob, err))
	}
	merged := reports.Suite{Name: name, Cluster: o.Name, Timestamp: start}
	for _, s := range read {
		merged.Results = append(merged.Results, s.Results...)
	}
	for _, f := range files {
		os.Remove(f)
	}
	return []reports.Suite{merged}, logGlob, suiteErr
}

// runProcess runs the e2e binary, reports each finished spec to OnSpec and
// keeps the full output in logPath. On interrupt the process gets SIGINT,
// so that Ginkgo runs its cleanup (namespaces).
func (o Options) runProcess(ctx context.Context, logPath string, args, env []string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
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
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err = cmd.Run()
	pw.Close()
	<-done
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
