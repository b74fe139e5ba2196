// Package runner runs skewproof's conformance suites against a cluster: a
// new one it brings up and deletes, or an existing one (a kubeconfig). It
// installs the fixture profiles through the node agent, which also reads
// each node's kernel facts, writes the run plan (package suites/env: the
// contract with the suite processes), creates the RuntimeClasses of failure
// row 1, runs the prebuilt e2e binary (bin/skewproof-e2e.test) in the
// processes runner/schedule plans from the specs' labels, reads their
// result lines into live progress and one JUnit file, writes the run
// record and removes what it created.
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
	"github.com/skewproof/skewproof/profiles/agentimage"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

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
	// after the other; none: every suite of the suite binary.
	Suites []string
	// SuiteBinary is the e2e binary (see FindSuiteBinary).
	SuiteBinary string
	// Declarations are the suite binary's (Declarations), when the front
	// end has asked it already (to refuse an unknown suite before anything
	// else); nil: Run asks it.
	Declarations []senv.Suite
	// LabelFilter, Focus and Skip select specs (Ginkgo syntax), on top of
	// the suite and the partition.
	LabelFilter, Focus, Skip string
	// JUnitDir receives the JUnit file, the logs and run.json.
	JUnitDir string
	// JUnitName is the JUnit file's name (default junit-<Name>.xml).
	JUnitName string
	// Keep keeps the new cluster and what the suites created.
	Keep bool
	// RemoveImages removes the node images of the new cluster once it is
	// deleted (the build cache stays: the next run reassembles them from
	// cached binaries), for runs of many clusters on a small disk.
	RemoveImages bool
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
	// Certify makes the run a certification run (reports.Certify): every
	// applicable id judged on every node, no skip but for a fact of the
	// release, every suite, nothing narrowed or tolerated.
	Certify bool
	// Mode and Command are recorded in run.json.
	Mode    string
	Command []string
	// Progress receives the steps; OnSpec each finished spec (default: a
	// progress line).
	Progress *progress.Progress
	OnSpec   func(reports.Result)

	// slowNodes are the nodes of one slow CPU (the plan's AppArmorKernel
	// nodes, on User-Mode Linux): their suite processes run one at a time.
	slowNodes []string
}

// Validate checks the settings every front end shares (the CLI, the
// in-cluster entrypoint, each cluster of a matrix), in the words of their
// flags; Run refuses options that do not validate.
func (o Options) Validate() error {
	switch {
	case o.Timeout <= 0:
		return errors.New("--timeout must be positive")
	case o.FlakeAttempts < 1:
		return errors.New("--flake-attempts must be at least 1 (1: no retry)")
	case o.AllowedNotReadyNodes < 0:
		return errors.New("--allowed-not-ready-nodes must be 0 or more")
	case o.AllowedNotReadyNodes > 0 && o.Kubeconfig == "" && o.Mode != "in-cluster":
		return errors.New("--allowed-not-ready-nodes applies to an existing cluster (--kubeconfig): every worker of a cluster skewproof brings up must be Ready")
	}
	if o.Certify {
		return o.validateCertify()
	}
	return nil
}

// validateCertify refuses what a certification run cannot be: a part of
// the catalogue, or a run that tolerates what a certification may not.
func (o Options) validateCertify() error {
	switch {
	case o.Selection() != reports.Selection{}:
		return fmt.Errorf("--certify judges every catalogue id: drop the narrowing (%s)", o.Selection())
	case o.AllowFlaky:
		return errors.New("--certify tolerates no flaky spec: drop --allow-flaky")
	case o.AllowedNotReadyNodes > 0:
		return errors.New("--certify judges every node: drop --allowed-not-ready-nodes")
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

// Selection is what narrows the run's specs beyond its suites.
func (o Options) Selection() reports.Selection {
	return reports.Selection{LabelFilter: o.LabelFilter, Focus: o.Focus, Skip: o.Skip}
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
//
// Its steps: bring the cluster up (or connect to the given one), find the
// nodes that cannot be tested, get the agent image onto the nodes, install
// the fixture profiles, make the run plan (suites/env.Plan) and hand it to
// the suite processes, then report.
func Run(ctx context.Context, o Options) (out Outcome, err error) {
	if err := o.Validate(); err != nil {
		return out, err
	}
	o.Complete()
	r := &run{o: o, p: o.Progress, prov: clusters.NewProvider(o.Progress), out: &out}
	// Registered first, so it runs last, after the clean-up: whatever
	// failed once the run was interrupted (a terminal's Ctrl-C reaches the
	// commands it runs too) is the interrupt.
	defer func() {
		if err != nil && ctx.Err() != nil && !errors.As(err, new(clusters.ExistsError)) {
			ie := InterruptedError{Report: out.JUnit, Kept: o.Keep}
			errors.As(err, &ie)
			ie.Cleanup = errors.Join(ie.Cleanup, r.cleanupErr)
			err = ie
		}
	}()
	// Each step's clean-up, run in reverse order whatever happens.
	defer func() {
		for i := len(r.cleanups) - 1; i >= 0; i-- {
			err = r.cleanups[i](err)
		}
	}()
	steps := []func(context.Context) error{r.start, r.bringUp, r.declare, r.connect, r.findUntestable, r.agentImage, r.fixtures, r.makePlan, r.runtimeClasses}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			r.reportEarly(ctx, err)
			return out, err
		}
	}
	suites, suiteErr := r.runSuites(ctx)
	if err := r.report(ctx, suites, suiteErr); err != nil {
		return out, err
	}
	verdict := r.verdict(ctx, suiteErr)
	return out, errors.Join(verdict, r.record(verdict))
}

// run is one Run in progress: what its steps found, for the next ones.
// Its state is in three parts, each filled by the steps named: the
// cluster under test (bringUp, connect, findUntestable), what was set up
// on it (agentImage, fixtures) and the run plan (makePlan).
type run struct {
	o    Options
	p    *progress.Progress
	prov *clusters.Provider
	out  *Outcome
	// cleanups undo the steps, last first; each gets the run's error and
	// returns it with its own joined; cleanupErr: the cluster's deletion
	// failed.
	cleanups   []func(error) error
	cleanupErr error
	junitDir   string
	rec        reports.Record
	specs      []reports.Result // the suites' results
	target     target
	setup      setup
	plan       runPlan
}

// target is the cluster under test.
type target struct {
	kubeconfig string
	own        bool     // the run brought the cluster up
	images     []string // the new cluster's node images (Options.RemoveImages)
	c          *cluster
	notTested  map[string]string            // the nodes that cannot be tested, and why
	access     map[string]nodeaccess.Access // per node
}

// setup is what the run set up on the cluster for its suites.
type setup struct {
	need     map[string]bool // the fixtures the run's suites declare
	image    agentimage.Image
	appArmor map[string]bool           // whether AppArmor profiles load, per node (the agent's report)
	host     map[string]skew.HostFacts // the kernel facts the agent read on each node
}

// runPlan is the run plan the suite processes read (senv.Plan), the file
// it is written to, and the nodes as connect found them, before it.
type runPlan struct {
	senv.Plan
	nodes []senv.PlanNode
	file  string
}

// start makes the results directory and begins the run record; it names
// what killed runs left behind (SIGKILL cannot be caught), with the command
// that removes it.
func (r *run) start(ctx context.Context) error {
	o := r.o
	// The suite processes run concurrently; OnSpec sees one spec at a time.
	var mu sync.Mutex
	onSpec := o.OnSpec
	r.o.OnSpec = func(res reports.Result) { mu.Lock(); defer mu.Unlock(); onSpec(res) }
	if err := os.MkdirAll(o.JUnitDir, 0o755); err != nil {
		return fmt.Errorf("creating the results directory: %w", err)
	}
	r.junitDir, _ = filepath.Abs(o.JUnitDir)
	r.rec = reports.Record{Command: o.Command, Skewproof: reports.ToolVersion(), Mode: o.Mode, Cluster: o.Name, Suites: o.Suites,
		LabelFilter: o.LabelFilter, Focus: o.Focus, Skip: o.Skip, Started: time.Now().UTC(), Certification: o.Certify,
		AllowFlaky: o.AllowFlaky, AllowedNotReadyNodes: o.AllowedNotReadyNodes}
	if left, err := r.prov.ListOwned(ctx); err == nil {
		for _, l := range left {
			if l.Left {
				r.p.Step("cluster %s was %s", l.Name, l.State)
			}
		}
	}
	r.target.kubeconfig, r.target.own = o.Kubeconfig, o.Kubeconfig == ""
	return nil
}

// declare resolves the run's suites against what the suite binary
// declares (Options.Declarations, or asked now): none named is every one,
// an unknown one is an error, a certification takes every one; the
// fixtures the run sets up are those its suites declare. The front ends
// (the CLI, the in-cluster entrypoint) resolve the suites before they call
// Run, so that nothing is made for an unknown one; a run whose cluster
// name is taken is refused first, for what it is.
func (r *run) declare(ctx context.Context) error {
	decls := r.o.Declarations
	if decls == nil {
		var err error
		if decls, err = Declarations(ctx, r.o.SuiteBinary); err != nil {
			return err
		}
	}
	suites, err := ResolveSuites(decls, r.o.Suites, r.o.Certify)
	if err != nil {
		return err
	}
	r.o.Suites = senv.Families(suites)
	r.rec.Suites = r.o.Suites
	r.setup.need = fixturesOf(suites)
	return nil
}

// bringUp brings up the new cluster (no Options.Kubeconfig), to be deleted
// on success, failure and interrupt (ctx is cancelled on SIGINT/SIGTERM),
// unless Keep.
func (r *run) bringUp(ctx context.Context) error {
	if !r.target.own {
		return nil
	}
	o, p := r.o, r.p
	r.cleanups = append(r.cleanups, func(err error) error {
		if errors.As(err, new(clusters.ExistsError)) {
			return err // refused: the cluster of that name is someone else's
		}
		if o.Keep {
			p.Step("keeping cluster %s (--keep); delete it with 'skewproof cluster down --name %s'", o.Name, o.Name)
			return err
		}
		if err != nil {
			for _, f := range clusters.SaveAppArmorNodeConsoles(o.Name, r.junitDir) {
				p.Step("AppArmor node console log kept: %s", f)
			}
		}
		dctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if derr := p.Timed("deleting cluster "+o.Name, func() error { return r.prov.Down(dctx, o.Name, r.target.kubeconfig) }); derr != nil {
			r.cleanupErr = fmt.Errorf("deleting cluster %s: %v; remove it with 'skewproof cluster down --name %s'", o.Name, reports.FirstLine(derr.Error()), o.Name)
			return errors.Join(err, r.cleanupErr)
		}
		if o.RemoveImages && len(r.target.images) > 0 {
			_ = p.Timed(fmt.Sprintf("removing the cluster's %d node images (--remove-images)", len(r.target.images)), func() error {
				return r.prov.RemoveNodeImages(dctx, r.target.images)
			})
		}
		return err
	})
	up := o.Up
	// The kubeconfig is the cluster's default one (Up writes it, Down
	// removes it: "" for both).
	up.Name, up.ArtifactsDir = o.Name, r.junitDir
	up.Temporary = !o.Keep
	c, err := r.prov.Up(ctx, up)
	if err != nil {
		return fmt.Errorf("bringing up cluster %s: %w", o.Name, err)
	}
	r.target.kubeconfig, r.target.images = c.Kubeconfig, c.Images
	h := nodefacts.Host()
	r.rec.Host = &reports.HostRecord{Kernel: kernelRelease(), Seccomp: h.Seccomp, AppArmor: h.AppArmor, CgroupVersion: h.CgroupVersion}
	return nil
}

// connect asks the API server its version and nodes, once for the run.
func (r *run) connect(ctx context.Context) (err error) {
	if r.target.c, err = connect(ctx, r.target.kubeconfig); err != nil {
		return err
	}
	if !r.target.own {
		reportOtherRuns(ctx, r.target.c, r.p)
	}
	r.rec.APIServer = r.target.c.apiserver
	// The plan's nodes, with this host's kernel facts until the agents
	// have read each node's (fixtures).
	r.plan.nodes, err = senv.NodesOf(r.target.c.nodes, nodefacts.Host(), senv.HostFromLocal)
	return err
}

// findUntestable names the nodes that cannot be tested before anything is
// deployed, not after the agent's time-out.
func (r *run) findUntestable(context.Context) error {
	var cordoned []string
	r.target.notTested, cordoned = untestable(r.target.c.nodes, senv.Plan{Nodes: r.plan.nodes}.Workers(), r.target.own)
	for i := range r.plan.nodes {
		r.plan.nodes[i].Untestable = r.target.notTested[r.plan.nodes[i].Name]
	}
	r.out.NotTested, r.rec.NotTested = r.target.notTested, r.target.notTested
	reported := skew.Skip
	if r.target.own {
		reported = skew.Fail
	}
	for _, why := range DescribeNotTested(r.target.notTested) {
		r.p.Step("cannot test %s; its kubelet rules are reported %s; %s", why, reported, untestableRemedy(r.target.own))
	}
	for _, n := range cordoned {
		r.p.Step("node %s is cordoned (unschedulable): tested anyway, the specs bind their pods to it by name as DaemonSets do; leave it out with --label-filter '!(node: containsAny %s)'", n, n)
	}
	return nil
}

// agentImage decides the access to each node (a User-Mode Linux node
// without docker access takes nothing away from the kind nodes) and gets
// the agent image onto the nodes.
func (r *run) agentImage(ctx context.Context) (err error) {
	r.target.access = nodeaccess.Probe(ctx, r.target.c.names()...)
	r.rec.NodeAccess = string(nodeaccess.Summary(r.target.access))
	r.setup.image, err = r.o.agentImage(ctx, r.p, r.prov, r.target.c.names(), nodeaccess.Summary(r.target.access))
	return err
}

// fixtures installs the fixture profiles through the node agent, when a
// suite that uses them runs, and reads each node's kernel facts from the
// agent.
func (r *run) fixtures(ctx context.Context) error {
	o := r.o
	need := r.setup.need
	if !need[senv.FixtureSeccompProfiles] && !need[senv.FixtureAppArmorProfiles] {
		return nil
	}
	f, err := o.installFixtures(ctx, r.p, r.target.kubeconfig, r.setup.image.Ref, len(r.target.c.nodes)-len(r.target.notTested), slices.Sorted(maps.Keys(r.target.notTested)), need[senv.FixtureAppArmorProfiles])
	if f.remove != nil && !o.Keep && !r.target.own {
		// A new cluster goes as a whole; on an existing one the agent
		// removes the files when their profiles go.
		r.cleanups = append(r.cleanups, func(err error) error { return errors.Join(err, f.remove()) })
	}
	r.setup.appArmor, r.setup.host = f.appArmor, f.host
	return err
}

// makePlan writes the run plan the suite processes read (senv.PlanFile):
// the nodes with their facts, read once here.
func (r *run) makePlan(context.Context) error {
	o := r.o
	nodes := r.plan.nodes
	for i := range nodes {
		n := &nodes[i]
		if f, ok := r.setup.host[n.Name]; ok {
			// Read on the node itself, by its agent.
			n.Host.CgroupVersion, n.Host.Seccomp, n.Host.AppArmor, n.HostFrom = f.CgroupVersion, f.Seccomp, f.AppArmor, senv.HostFromAgent
		}
		if on, ok := r.setup.appArmor[n.Name]; ok {
			// Whether AppArmor profiles load there, as the agent found.
			n.Host.AppArmor = on
		}
	}
	r.plan.Plan = senv.Plan{Cluster: o.Name, Kubeconfig: r.target.kubeconfig, RunID: rand.String(6), Own: r.target.own, Keep: o.Keep,
		APIServer: r.target.c.apiserver, AgentImage: r.setup.image.Ref, AgentImageNote: r.setup.image.Note, Nodes: nodes}
	r.plan.SetAccess(r.target.access)
	r.rec.Nodes = r.target.c.records(r.setup.appArmor, r.target.access)
	r.plan.file = filepath.Join(r.junitDir, ".plan-"+o.Name+".json")
	if !o.Keep {
		// Kept with the cluster: a suite process can be run by hand on it
		// with the same plan (SKEWPROOF_PLAN).
		r.cleanups = append(r.cleanups, func(err error) error { _ = os.Remove(r.plan.file); return err })
	}
	return senv.WritePlan(r.plan.file, r.plan.Plan)
}

// runtimeClasses creates the RuntimeClasses of failure row 1, shared by the
// processes: here, so that no process deletes them while another still
// uses them.
func (r *run) runtimeClasses(ctx context.Context) error {
	if !r.setup.need[senv.FixtureRuntimeClasses] {
		return nil
	}
	created, err := ensureRuntimeClasses(ctx, r.target.c, r.plan.RunID)
	if len(created) > 0 {
		r.cleanups = append(r.cleanups, func(err error) error { deleteRuntimeClasses(r.target.c, created); return err })
	}
	return err
}

// runSuites is the step that runs the suites: their processes
// (Options.runProcesses), with the AppArmor nodes marked slow, and, on an
// existing cluster, the removal of the namespaces they left.
func (r *run) runSuites(ctx context.Context) ([]reports.Suite, error) {
	r.out.JUnit = filepath.Join(r.junitDir, r.o.JUnitName)
	_ = os.Remove(r.out.JUnit)
	o := r.o
	for _, n := range r.plan.Nodes {
		if n.AppArmorKernel {
			o.slowNodes = append(o.slowNodes, n.Name)
		}
	}
	suites, logs, err := o.runProcesses(ctx, r.p, r.junitDir, []string{senv.PlanFile + "=" + r.plan.file})
	r.out.Logs = append(r.out.Logs, logs...)
	if !r.target.own && !r.o.Keep {
		deleteRunNamespaces(r.target.c, r.plan.RunID, r.p)
	}
	return suites, err
}

// report writes the JUnit file and the run record. A suite the focus
// selected no spec of is left out of the report: JUnit readers such as
// Sonobuoy's count an empty <testsuite> as one passed test.
func (r *run) report(ctx context.Context, suites []reports.Suite, suiteErr error) error {
	o, out := r.o, r.out
	var report []reports.Suite
	for _, s := range suites {
		if len(s.Results) > 0 {
			s.FlakyTolerated = o.AllowFlaky
			s.Selection = o.Selection()
			if o.Certify {
				s.Certification, s.Results = true, reports.Certify(s.Results)
			}
			report = append(report, s)
			r.specs = append(r.specs, s.Results...)
		}
	}
	if r.nodesFail() {
		// Skipped kubelet rules alone would look green to a reader of the
		// JUnit file only (Sonobuoy, Hydrophone, testgrid): the nodes that
		// could not be tested are a failed test case of their own.
		report = append(report, reports.RunFailure(o.Name, NodesTestedID, "every requested node tested",
			fmt.Sprintf("%d node(s) could not be tested: %s\n%s", len(r.target.notTested), strings.Join(DescribeNotTested(r.target.notTested), "\n"), untestableRemedy(r.target.own))))
	}
	if unread := reports.NotResearched(r.specs); len(unread) > 0 {
		// Skips a JUnit reader would count as green: nothing was judged
		// there, for want of skewproof's own reading of those releases.
		report = append(report, reports.RunFailure(o.Name, NotResearchedID, "every rule researched at the cluster's versions", notResearchedFailure(unread)))
	}
	if suiteErr != nil && ctx.Err() == nil {
		// A process that failed outside its specs (its set-up, its
		// clean-up, a crash after its last spec): the specs it never
		// reported are failures of their own, and this says why.
		report = append(report, reports.RunFailure(o.Name, SuiteProcessesID, "every suite process ended cleanly",
			fmt.Sprintf("a suite failed outside the specs: %v\nlogs: %s", suiteErr, strings.Join(out.Logs, " "))))
	}
	if len(report) > 0 {
		if err := reports.WriteJUnitFile(out.JUnit, report...); err != nil {
			return err
		}
	}
	for _, s := range report {
		out.Results = append(out.Results, s.Results...)
	}
	return nil
}

// reportEarly leaves a verdict in the results directory of a run that
// failed before its suites ran (the cluster did not come up, the agent
// did not start): a JUnit file whose one test case is that failure, and
// the run record, so that a matrix leg or a nightly job that produced no
// spec results is a failed leg to every reader, never one left out.
//
// Only on a cluster of its own: on an existing cluster a failure before
// the suites is bad input (an unreachable or forbidden kubeconfig), which
// leaves nothing behind.
func (r *run) reportEarly(ctx context.Context, err error) {
	if r.junitDir == "" || !r.target.own {
		return
	}
	r.out.JUnit = filepath.Join(r.junitDir, r.o.JUnitName)
	what := "the cluster set up for the suites"
	if ctx.Err() != nil {
		what = "the run not interrupted before its suites"
	}
	f := reports.RunFailure(r.o.Name, SetUpID, what, fmt.Sprintf("the run failed before its suites ran: %v", err))
	if werr := reports.WriteJUnitFile(r.out.JUnit, f); werr != nil {
		r.p.Step("writing %s: %v", r.out.JUnit, werr)
		return
	}
	r.out.Results = f.Results
	if rerr := r.record(err); rerr != nil {
		r.p.Step("%v", rerr)
	}
}

// record writes the run record (run.json) with the run's verdict: the exit
// status the run ends with and why, so that 'bundle verify' and 'report'
// never call green a run the CLI called red.
func (r *run) record(verdict error) error {
	out, rec := r.out, &r.rec
	rec.Finished = time.Now().UTC()
	rec.RuntimeNotResearched = reports.RuntimeUnread(r.specs)
	rec.JUnit = filepath.Base(out.JUnit)
	for _, l := range out.Logs {
		rec.Logs = append(rec.Logs, filepath.Base(l))
	}
	rec.SetVerdict(ExitStatus(verdict), verdict)
	if err := reports.WriteRecord(r.junitDir, *rec); err != nil {
		return fmt.Errorf("writing the run record: %w", err)
	}
	out.Record = rec
	return nil
}

// ExitStatus is the exit status a run's error makes: 0 green, 130
// interrupted, 1 anything else (the CLI's, cmd/skewproof).
func ExitStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(InterruptedError)), errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

// nodesFail says whether the nodes that could not be tested fail the run.
func (r *run) nodesFail() bool {
	return len(r.target.notTested) > 0 && (r.target.own || len(r.target.notTested) > r.o.AllowedNotReadyNodes)
}

// verdict is the run's error: nil only when every requested spec was
// judged pass or deviation or skipped for a fact of the cluster.
func (r *run) verdict(ctx context.Context, suiteErr error) error {
	o, out, specs := r.o, r.out, r.specs
	counts := reports.Count(specs)
	unread := reports.NotResearched(specs)
	switch {
	case ctx.Err() != nil:
		return InterruptedError{Report: out.JUnit, Kept: o.Keep}
	case r.nodesFail():
		msg := fmt.Sprintf("%d node(s) could not be tested: %s", len(r.target.notTested), strings.Join(DescribeNotTested(r.target.notTested), "; "))
		if counts[skew.Fail] > 0 {
			msg += fmt.Sprintf("; %d of %d specs failed", counts[skew.Fail], len(specs))
		}
		if !r.target.own {
			msg += fmt.Sprintf(" (--allowed-not-ready-nodes %d)", o.AllowedNotReadyNodes)
		}
		return fmt.Errorf("%s; see %s", msg, out.JUnit)
	case counts[skew.Fail] > 0 && len(uncertified(specs)) > 0:
		u := uncertified(specs)
		return fmt.Errorf("%d of %d specs failed, %d of them not judged where they apply (a certification accepts no skip but for a fact of the release), first: %s; see %s",
			counts[skew.Fail], len(specs), len(u), reports.FirstLine(u[0].Failure), out.JUnit)
	case counts[skew.Fail] > 0:
		return fmt.Errorf("%d of %d specs failed; see %s", counts[skew.Fail], len(specs), out.JUnit)
	case len(unread) > 0:
		return fmt.Errorf("%s; see %s", reports.FirstLine(notResearchedFailure(unread)), out.JUnit)
	case !reports.Green(specs, o.AllowFlaky):
		return fmt.Errorf("%d of %d specs were flaky (failed, then passed on a retry): not conformant; see %s (--allow-flaky tolerates them)", counts[skew.Flaky], len(specs), out.JUnit)
	case suiteErr != nil:
		return fmt.Errorf("a suite failed outside the specs: %w (logs: %s)", suiteErr, strings.Join(out.Logs, " "))
	case len(out.Results) == 0:
		return fmt.Errorf("no spec ran (label filter %q, focus %q, skip %q)", o.LabelFilter, o.Focus, o.Skip)
	}
	return nil
}

// uncertified are the results a certification run failed because they were
// skipped for something other than a fact of the release.
func uncertified(rs []reports.Result) []reports.Result {
	var out []reports.Result
	for _, r := range rs {
		if r.Reason == reports.CertificationFailure {
			out = append(out, r)
		}
	}
	return out
}

// NodesTestedID is the id of the failed test case that stands for the nodes
// a run could not test (Outcome.NotTested) when they fail the run.
const NodesTestedID = "skewproof/run/nodes"

// SetUpID is the id of the failed test case of a run that failed before
// its suites ran.
const SetUpID = "skewproof/run/set-up"

// SuiteProcessesID is the id of the failed test case that stands for a
// suite process that failed outside its specs.
const SuiteProcessesID = "skewproof/run/suite-processes"

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
