// Package runner runs skewproof's conformance suites against a cluster: a
// new one it brings up and deletes, or an existing one (a kubeconfig). It
// plans the suite processes (the suites at the same time, the API server
// rules in one process, each worker's kubelet rules in others), installs the fixture profiles through the
// node agent, creates the RuntimeClasses of failure row 1, runs the
// prebuilt e2e binary (bin/skewproof-e2e.test) once per process with the
// environment of package suites/env, turns its output into live progress,
// merges the JUnit files, writes the run record and removes what it
// created.
//
// cmd/skewproof ('skewproof run') and the conformance image's entrypoint
// (package runner/incluster) are thin layers of flags over Run.
package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"

	"github.com/skewproof/skewproof/internal/nodeaccess"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// Suites are the suites of the e2e binary, in the order they run.
var Suites = []string{"seccomp", "apparmor", "profiles"}

// Options configure one run.
type Options struct {
	// Name is the cluster's name: the new cluster's, or the name recorded
	// in the report for an existing one.
	Name string
	// Kubeconfig is an existing cluster's kubeconfig; empty: Up is the new
	// cluster to bring up (and delete afterwards unless Keep).
	Kubeconfig string
	Up         clusters.UpOptions
	// Suites to run: at the same time with Parallel (see plan), else one
	// after the other.
	Suites []string
	// SuiteBinary is the e2e binary (see FindSuiteBinary).
	SuiteBinary string
	// LabelFilter, Focus and Skip select specs (Ginkgo syntax), on top of
	// the suite and the partition.
	LabelFilter, Focus, Skip string
	// JUnitDir receives the JUnit file, the logs and run.json.
	JUnitDir string
	// JUnitName is the JUnit file's name (default junit-<Name>.xml).
	JUnitName string
	// Keep keeps the new cluster and what the suites created.
	Keep bool
	// Parallel runs the suites at the same time, the API server rules and
	// each worker's kubelet rules in concurrent processes (see plan).
	Parallel bool
	Timeout  time.Duration
	// FlakeAttempts > 1 runs a failed spec again, up to that many attempts
	// in all; a spec that passes on a retry is reported flaky, with the
	// earlier failure (DefaultFlakeAttempts: one retry).
	FlakeAttempts int
	// AllowFlaky tolerates flaky specs: they no longer fail the run and
	// their JUnit cases carry no <failure> (the run record and the JUnit
	// suite say so). Off: a flaky spec is not conformant.
	AllowFlaky bool
	// AllowedNotReadyNodes is how many nodes of an existing cluster may be
	// untestable (not Ready) without failing the run (the e2e framework's
	// --allowed-not-ready-nodes); their kubelet rules are skipped, naming
	// the node. On a cluster the run brought up, none may be.
	AllowedNotReadyNodes int
	// AgentImage is a node agent image present on every node; empty: one
	// is built from AgentBinary and loaded into local node containers.
	AgentImage, AgentImageNote string
	// AgentBinary is a static skewproof binary (the running executable).
	AgentBinary string
	// Mode and Command are recorded in run.json.
	Mode    string
	Command []string
	// Progress receives the steps; OnSpec each finished spec (default: a
	// progress line).
	Progress *progress.Progress
	OnSpec   func(reports.Result)
}

// Validate checks the settings every front end shares (the CLI, the
// in-cluster entrypoint, each cluster of a matrix), in the words of their
// flags; Run refuses options that do not validate.
func (o Options) Validate() error {
	switch {
	case o.Timeout <= 0:
		return errors.New("--timeout must be positive")
	case len(o.Suites) == 0:
		return errors.New("--suites: give at least one suite, e.g. seccomp")
	case o.FlakeAttempts < 1:
		return errors.New("--flake-attempts must be at least 1 (1: no retry)")
	case o.AllowedNotReadyNodes < 0:
		return errors.New("--allowed-not-ready-nodes must be 0 or more")
	case o.AllowedNotReadyNodes > 0 && o.Kubeconfig == "" && o.Mode != "in-cluster":
		return errors.New("--allowed-not-ready-nodes applies to an existing cluster (--kubeconfig): every worker of a cluster skewproof brings up must be Ready")
	}
	for _, s := range o.Suites {
		if !slices.Contains(Suites, s) {
			return fmt.Errorf("--suites: unknown suite %q (known: %s)", s, strings.Join(Suites, ", "))
		}
	}
	return nil
}

// Complete fills in what o leaves to the defaults: progress on stderr,
// one progress line per finished spec (OnSpec), the JUnit file's name
// (junit-<name>.xml). Run completes the options it is given.
func (o *Options) Complete() {
	if o.Progress == nil {
		o.Progress = progress.New(os.Stderr)
	}
	if o.OnSpec == nil {
		p := o.Progress
		o.OnSpec = func(r reports.Result) { p.Step("%s", reports.ProgressLine(r)) }
	}
	if o.JUnitName == "" {
		o.JUnitName = "junit-" + o.Name + ".xml"
	}
}

// DefaultFlakeAttempts is one retry of a failed spec.
const DefaultFlakeAttempts = 2

// Outcome is what a run produced.
type Outcome struct {
	JUnit   string
	Logs    []string
	Results []reports.Result
	// NotTested are the nodes whose kubelet rules could not run, with why.
	NotTested map[string]string
	// Record is the run record written to run.json (nil when the run
	// ended before it was written).
	Record *reports.Record
}

// Run runs the suites and returns their results. It fails when a spec
// failed, when a suite failed outside its specs, when no spec ran, and on
// interrupt (ctx cancelled), after cleaning up in every case.
func Run(ctx context.Context, o Options) (out Outcome, err error) {
	if err := o.Validate(); err != nil {
		return out, err
	}
	var cleanupErr error
	// Registered first, so it runs last, after the clean-up: whatever
	// failed once the run was interrupted (a terminal's Ctrl-C reaches the
	// commands it runs too) is the interrupt.
	defer func() {
		if err != nil && ctx.Err() != nil && !errors.As(err, new(clusters.ExistsError)) {
			ie := InterruptedError{Report: out.JUnit, Kept: o.Keep}
			errors.As(err, &ie)
			ie.Cleanup = errors.Join(ie.Cleanup, cleanupErr)
			err = ie
		}
	}()
	o.Complete()
	p := o.Progress
	// The suite processes run concurrently; OnSpec sees one spec at a time.
	var mu sync.Mutex
	onSpec := o.OnSpec
	o.OnSpec = func(r reports.Result) { mu.Lock(); defer mu.Unlock(); onSpec(r) }
	if err := os.MkdirAll(o.JUnitDir, 0o755); err != nil {
		return out, fmt.Errorf("creating the results directory: %w", err)
	}
	junitDir, _ := filepath.Abs(o.JUnitDir)
	rec := reports.Record{Command: o.Command, Skewproof: reports.ToolVersion(), Mode: o.Mode, Cluster: o.Name, Suites: o.Suites,
		LabelFilter: o.LabelFilter, Focus: o.Focus, Skip: o.Skip, Started: time.Now().UTC(),
		AllowFlaky: o.AllowFlaky, AllowedNotReadyNodes: o.AllowedNotReadyNodes}

	// What killed runs left (SIGKILL cannot be caught) is named, with the
	// command that removes it.
	if left, err := clusters.NewProvider(p).ListOwned(ctx); err == nil {
		for _, l := range left {
			if l.Left {
				p.Step("cluster %s was %s", l.Name, l.State)
			}
		}
	}
	kubeconfig := o.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = clusters.DefaultKubeconfig(o.Name)
		// Deleted on success, failure and interrupt (ctx is cancelled on
		// SIGINT/SIGTERM), unless Keep.
		defer func() {
			if errors.As(err, new(clusters.ExistsError)) {
				// Refused: the cluster of that name is someone else's.
				return
			}
			if o.Keep {
				p.Step("keeping cluster %s (--keep); delete it with 'skewproof cluster down --name %s'", o.Name, o.Name)
				return
			}
			if err != nil {
				for _, f := range clusters.NewProvider(p).SaveAppArmorNodeConsoles(o.Name, junitDir) {
					p.Step("AppArmor node console log kept: %s", f)
				}
			}
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if derr := p.Timed("deleting cluster "+o.Name, func() error { return clusters.NewProvider(p).Down(dctx, o.Name, kubeconfig) }); derr != nil {
				cleanupErr = fmt.Errorf("deleting cluster %s: %v; remove it with 'skewproof cluster down --name %s'", o.Name, reports.FirstLine(derr.Error()), o.Name)
				err = errors.Join(err, cleanupErr)
			}
		}()
		up := o.Up
		up.Name, up.Kubeconfig, up.ArtifactsDir = o.Name, kubeconfig, junitDir
		up.Temporary = !o.Keep
		if _, err := clusters.NewProvider(p).Up(ctx, up); err != nil {
			return out, fmt.Errorf("bringing up cluster %s: %w", o.Name, err)
		}
		h := nodefacts.Host()
		rec.Host = &reports.HostRecord{Kernel: kernelRelease(), Seccomp: h.Seccomp, AppArmor: h.AppArmor, CgroupVersion: h.CgroupVersion}
	}
	c, err := connect(ctx, kubeconfig)
	if err != nil {
		return out, err
	}
	if o.Kubeconfig != "" {
		reportOtherRuns(ctx, c, p)
	}
	// The nodes to test, before anything is deployed: a node that cannot be
	// tested is named now, not after the agent's time-out.
	own := o.Kubeconfig == ""
	notTested, cordoned := untestable(c.nodes, own)
	out.NotTested, rec.NotTested = notTested, notTested
	reported := skew.Skip
	if own {
		reported = skew.Fail
	}
	for _, why := range DescribeNotTested(notTested) {
		p.Step("cannot test %s; its kubelet rules are reported %s; %s", why, reported, untestableRemedy(own))
	}
	for _, n := range cordoned {
		p.Step("node %s is cordoned (unschedulable): tested anyway, the specs bind their pods to it by name as DaemonSets do; leave it out with --label-filter '!(node: containsAny %s)'", n, n)
	}
	rec.APIServer = c.apiserver
	access := nodeaccess.Probe(ctx, c.names()...)
	rec.NodeAccess = string(access)
	image, err := o.agentImage(ctx, p, c.names(), access)
	if err != nil {
		return out, err
	}
	var appArmorNodes map[string]bool
	if slices.Contains(o.Suites, "seccomp") || slices.Contains(o.Suites, "apparmor") {
		remove, loaded, err := o.installFixtures(ctx, p, kubeconfig, image.Ref, len(c.nodes)-len(notTested), slices.Sorted(maps.Keys(notTested)))
		if remove != nil && !o.Keep && o.Kubeconfig != "" {
			// A new cluster goes as a whole; on an existing one the agent
			// removes the files when their profiles go.
			defer func() { err = errors.Join(err, remove()) }()
		}
		if err != nil {
			return out, err
		}
		appArmorNodes = loaded
	}
	rec.Nodes = c.records(appArmorNodes)

	out.JUnit = filepath.Join(junitDir, o.JUnitName)
	_ = os.Remove(out.JUnit)
	runID := rand.String(6)
	env := []string{senv.Kubeconfig + "=" + kubeconfig, senv.Cluster + "=" + o.Name, senv.NodeAccess + "=" + rec.NodeAccess,
		senv.RunID + "=" + runID, senv.AgentImage + "=" + image.Ref, senv.AgentImageNote + "=" + image.Note}
	if o.Keep {
		env = append(env, senv.Keep+"=1")
	}
	if own {
		env = append(env, senv.OwnCluster+"=1")
	}
	env = append(env, senv.UntestableNodes+"="+untestableEnv(notTested))
	if len(appArmorNodes) > 0 {
		env = append(env, senv.AppArmorNodes+"="+joinFacts(appArmorNodes))
	}
	// The RuntimeClasses of failure row 1, shared by the processes: created
	// here, so no process deletes them while another still uses them.
	created, err := ensureRuntimeClasses(ctx, c, runID)
	if len(created) > 0 {
		defer deleteRuntimeClasses(c, created)
	}
	if err != nil {
		return out, err
	}
	suites, logs, suiteErr := o.runSuites(ctx, p, junitDir, env)
	out.Logs = append(out.Logs, logs...)
	if o.Kubeconfig != "" && !o.Keep {
		deleteRunNamespaces(c, runID, p)
	}
	// A suite the focus selected no spec of is left out of the report:
	// JUnit readers such as Sonobuoy's count an empty <testsuite> as one
	// passed test.
	var report []reports.Suite
	var specs []reports.Result
	for _, s := range suites {
		if len(s.Results) > 0 {
			s.FlakyTolerated = o.AllowFlaky
			report = append(report, s)
			specs = append(specs, s.Results...)
		}
	}
	nodesFail := len(notTested) > 0 && (own || len(notTested) > o.AllowedNotReadyNodes)
	if nodesFail {
		// Skipped kubelet rules alone would look green to a reader of the
		// JUnit file only (Sonobuoy, Hydrophone, testgrid): the nodes that
		// could not be tested are a failed test case of their own.
		report = append(report, reports.RunFailure(o.Name, NodesTestedID, "every requested node tested",
			fmt.Sprintf("%d node(s) could not be tested: %s\n%s", len(notTested), strings.Join(DescribeNotTested(notTested), "\n"), untestableRemedy(own))))
	}
	unread := reports.NotResearched(specs)
	if len(unread) > 0 {
		// Skips a JUnit reader would count as green: nothing was judged
		// there, for want of skewproof's own reading of those releases.
		report = append(report, reports.RunFailure(o.Name, NotResearchedID, "every rule researched at the cluster's versions", notResearchedFailure(unread)))
	}
	if len(report) > 0 {
		if err := reports.WriteJUnitFile(out.JUnit, report...); err != nil {
			return out, err
		}
	}
	for _, s := range report {
		out.Results = append(out.Results, s.Results...)
	}
	rec.Finished = time.Now().UTC()
	rec.RuntimeNotResearched = reports.RuntimeUnread(specs)
	rec.JUnit = filepath.Base(out.JUnit)
	for _, l := range out.Logs {
		rec.Logs = append(rec.Logs, filepath.Base(l))
	}
	if err := reports.WriteRecord(junitDir, rec); err != nil {
		return out, err
	}
	out.Record = &rec
	counts := reports.Count(specs)
	switch {
	case ctx.Err() != nil:
		return out, InterruptedError{Report: out.JUnit, Kept: o.Keep}
	case nodesFail:
		msg := fmt.Sprintf("%d node(s) could not be tested: %s", len(notTested), strings.Join(DescribeNotTested(notTested), "; "))
		if counts[skew.Fail] > 0 {
			msg += fmt.Sprintf("; %d of %d specs failed", counts[skew.Fail], len(specs))
		}
		if !own {
			msg += fmt.Sprintf(" (--allowed-not-ready-nodes %d)", o.AllowedNotReadyNodes)
		}
		return out, fmt.Errorf("%s; see %s", msg, out.JUnit)
	case counts[skew.Fail] > 0:
		return out, fmt.Errorf("%d of %d specs failed; see %s", counts[skew.Fail], len(specs), out.JUnit)
	case len(unread) > 0:
		return out, fmt.Errorf("%s; see %s", reports.FirstLine(notResearchedFailure(unread)), out.JUnit)
	case !reports.Green(specs, o.AllowFlaky):
		return out, fmt.Errorf("%d of %d specs were flaky (failed, then passed on a retry): not conformant; see %s (--allow-flaky tolerates them)", counts[skew.Flaky], len(specs), out.JUnit)
	case suiteErr != nil:
		return out, fmt.Errorf("a suite failed outside the specs: %w (logs: %s)", suiteErr, strings.Join(out.Logs, " "))
	case len(out.Results) == 0:
		return out, fmt.Errorf("no spec ran (label filter %q, focus %q, skip %q)", o.LabelFilter, o.Focus, o.Skip)
	}
	return out, nil
}

// NodesTestedID is the id of the failed test case that stands for the nodes
// a run could not test (Outcome.NotTested) when they fail the run.
const NodesTestedID = "skewproof/run/nodes"

// NotResearchedID is the id of the failed test case that stands for the
// specs skipped because skewproof has not read their rules' sources at the
// cluster's versions.
const NotResearchedID = "skewproof/run/not-researched"

// notResearchedFailure says how many specs were not judged for want of
// researched sources, and where.
func notResearchedFailure(unread []reports.Result) string {
	why := map[string]bool{}
	var lines []string
	for _, r := range unread {
		if !why[r.NotResearched] {
			why[r.NotResearched] = true
			lines = append(lines, r.NotResearched)
		}
	}
	return fmt.Sprintf("%d specs were not judged: skewproof has not read the sources of these releases, so it cannot say what they must do (not green)\n%s",
		len(unread), strings.Join(lines, "\n"))
}

// InterruptedError is a run stopped by an interrupt (ctx cancelled) after it
// cleaned up; it wraps context.Canceled.
type InterruptedError struct {
	Report  string // the partial JUnit file
	Kept    bool   // --keep: the cluster was not removed
	Cleanup error  // what could not be removed
}

func (e InterruptedError) Error() string {
	s := "interrupted"
	if e.Report != "" {
		if _, err := os.Stat(e.Report); err == nil {
			s += "; partial report in " + e.Report
		}
	}
	switch {
	case e.Cleanup != nil:
		return s + "; " + strings.ReplaceAll(e.Cleanup.Error(), "\n", "; ")
	case e.Kept:
		return s + "; the cluster is kept (--keep)"
	}
	return s + "; what the run had created was removed"
}

func (e InterruptedError) Unwrap() error { return context.Canceled }
