package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/skew"
)

type runOptions struct {
	name, apiserver, kubeconfig, labelFilter, junitDir string
	suiteBinary, agentImg, appArmorNode, umlKernel     string
	kubeletList, ids, rerun, suiteList, matrix         string
	matrixRuntimeList                                  string
	matrixRuntimes                                     []clusters.NodeRuntime
	ociArgs                                            []string
	runtimes                                           []clusters.NodeRuntime
	ociRuntimes                                        map[string]string
	suites, kubelets                                   []string
	keep, parallel, buildSuites, allowFlaky            bool
	allowedNotReady                                    int
	timeout                                            time.Duration
	flakeAttempts, matrixParallel                      int
	plan                                               []skew.Cluster
	appArmorWorker                                     clusters.Worker // --apparmor-node, parsed
	imageArgs, gateArgs                                []string
	images                                             map[string]string
	gates                                              map[string]bool
}

func newRunCmd() *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "run the conformance suites on a new cluster (--apiserver, --kubelets), every cluster of a version matrix (--matrix) or an existing one (--kubeconfig)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(cmd.Context()); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.name, "name", "skewproof-run", "cluster name (a new cluster), or the name recorded in the report (--kubeconfig)")
	fs.StringVar(&o.apiserver, "apiserver", "", "kube-apiserver version of a new cluster, e.g. 1.37.2")
	fs.StringVar(&o.kubeletList, "kubelets", "", kubeletsUsage)
	fs.StringArrayVar(&o.ociArgs, "oci-runtime", nil, ociRuntimeUsage)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "run against this existing cluster instead of creating one")
	fs.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'kubelet && !failure' or 'seccomp-kubelet-enforce' (ids with '/' replaced by '-')")
	fs.StringVar(&o.junitDir, "junit-dir", "_artifacts", "directory for junit-<cluster>.xml and the suite log")
	fs.BoolVar(&o.keep, "keep", false, "keep the cluster (and leftover namespaces) after the run")
	fs.BoolVar(&o.parallel, "parallel", true, "run the suites at the same time, each in concurrent processes (the API server rules in one, each worker's kubelet rules in others); false: one suite after the other")
	fs.StringVar(&o.ids, "ids", "", "comma-separated catalogue ids to run, e.g. seccomp/kubelet/enforce,seccomp/failure/row-4 (ANDed with --label-filter)")
	fs.StringVar(&o.rerun, "rerun-failed", "", "a JUnit file of an earlier run: run only the specs that failed there, on the nodes they failed on")
	fs.StringVar(&o.suiteList, "suites", "seccomp,apparmor", "comma-separated suites to run (at the same time with --parallel, else one after the other): "+strings.Join(runner.Suites, ", "))
	fs.StringVar(&o.suiteBinary, "suite-binary", "", "the e2e binary (default: "+runner.SuiteBinaryName+" beside this executable, as 'make build' puts it)")
	fs.BoolVar(&o.buildSuites, "build-suites", false, "compile the e2e binary from the source tree with 'go test -c "+runner.SuitePackage+"' (development; needs Go)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "limit for the suite run")
	fs.StringVar(&o.agentImg, "agent-image", "", "node agent image present on every node (default: built from this binary and loaded into the kind node containers; required with --kubeconfig when the nodes are not local containers)")
	fs.StringVar(&o.appArmorNode, "apparmor-node", "", appArmorNodeUsage)
	fs.StringVar(&o.umlKernel, "uml-kernel", "", umlKernelUsage)
	fs.StringArrayVar(&o.gateArgs, "feature-gates", nil, "feature gates for every component of a new cluster, e.g. AppArmor=false (where the version still allows it)")
	fs.StringArrayVar(&o.imageArgs, "node-image", nil, nodeImageUsage)
	fs.IntVar(&o.flakeAttempts, "flake-attempts", runner.DefaultFlakeAttempts, "attempts of a failed spec: a pass on a later attempt is reported flaky, with the earlier failure, and fails the run (1: no retry)")
	fs.BoolVar(&o.allowFlaky, "allow-flaky", false, "tolerate flaky specs: they do not fail the run and their JUnit cases carry no <failure> (recorded in run.json and the JUnit suite's properties)")
	fs.IntVar(&o.allowedNotReady, "allowed-not-ready-nodes", 0, "with --kubeconfig: how many nodes may be not Ready without failing the run; their kubelet rules are skipped, naming the node")
	fs.StringVar(&o.matrix, "matrix", "", "run every cluster 'skewproof matrix' plans for these kube-apiserver minors, e.g. 1.36..1.37, into --junit-dir/<cluster>/, then merge them into --junit-dir/report/")
	fs.StringVar(&o.matrixRuntimeList, "matrix-runtimes", "", matrixRuntimesUsage)
	fs.IntVar(&o.matrixParallel, "matrix-parallel", 1, "with --matrix: clusters at once (preflight refuses more than the host's free memory fits)")
	return c
}

func (o runOptions) run(ctx context.Context) error {
	p := progress.New(os.Stderr)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ro := runner.Options{Name: o.name, Kubeconfig: o.kubeconfig, Suites: o.suites, LabelFilter: o.labelFilter,
		JUnitDir: o.junitDir, Keep: o.keep, Parallel: o.parallel, Timeout: o.timeout, AgentImage: o.agentImg,
		AgentBinary: exe, Mode: "existing-cluster", Command: os.Args, Progress: p, FlakeAttempts: o.flakeAttempts,
		AllowFlaky: o.allowFlaky, AllowedNotReadyNodes: o.allowedNotReady}
	if o.kubeconfig == "" {
		// Docker first: without it nothing can start, and nothing need be
		// cleaned up.
		if err := dockerReady(ctx); err != nil {
			return err
		}
		if err := o.checkDisk(ctx); err != nil {
			return err
		}
		ro.Mode = "new-cluster"
		ro.Up = clusters.UpOptions{APIServer: o.apiserver, Kubelets: o.kubelets, Runtimes: o.runtimes, OCIRuntimes: o.ociRuntimes, NodeImages: o.images, FeatureGates: o.gates, AppArmorNode: o.appArmorWorker.Kubelet, AppArmorNodeRuntime: o.appArmorWorker.Runtime, UMLKernel: o.umlKernel}
	}
	// The suite binary first: a compile error should not cost a cluster.
	switch {
	case o.suiteBinary != "":
		ro.SuiteBinary = o.suiteBinary
	case o.buildSuites:
		tmp, err := os.MkdirTemp("", "skewproof-suite-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		if ro.SuiteBinary, err = runner.BuildSuiteBinary(ctx, p, tmp); err != nil {
			return err
		}
	default:
		if ro.SuiteBinary, err = runner.FindSuiteBinary(exe); err != nil {
			return err
		}
	}
	if o.matrix != "" {
		return o.runMatrix(ctx, ro)
	}
	// A run that fails before it has results leaves no empty --junit-dir.
	made := missingDirs(o.junitDir)
	out, err := runner.Run(ctx, ro)
	if err != nil {
		for _, d := range made {
			_ = os.Remove(d) // only when empty
		}
	}
	if len(out.Results) > 0 || out.JUnit != "" {
		fmt.Println()
		reports.WriteSummary(os.Stdout, out.Results)
		for _, why := range runner.DescribeNotTested(out.NotTested) {
			fmt.Printf("not tested: %s\n", why)
		}
		fmt.Printf("JUnit: %s\nlogs:  %s\n", out.JUnit, strings.Join(out.Logs, " "))
	}
	return err
}

// missingDirs are dir and its parents that do not exist yet, deepest first.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// checkDisk refuses a run whose builds do not fit on disk, before anything
// is built (after Docker answers: the images it has decide what is built).
func (o runOptions) checkDisk(ctx context.Context) error {
	plan := o.plan
	if len(plan) == 0 {
		plan = []skew.Cluster{{Apiserver: o.apiserver, Kubelets: o.kubelets}}
	}
	var all capacity.Builds
	for _, c := range plan {
		// The workers' runtimes: --kubelets' own, or each of
		// --matrix-runtimes for every worker of a matrix cluster.
		perWorker := [][]clusters.NodeRuntime{o.runtimes}
		if len(o.plan) > 0 && len(o.matrixRuntimes) > 0 {
			perWorker = nil
			for _, r := range o.matrixRuntimes {
				perWorker = append(perWorker, slices.Repeat([]clusters.NodeRuntime{r}, len(c.Kubelets)))
			}
		}
		for _, rt := range perWorker {
			b, err := clusters.NewProvider(nil).PlanBuilds(ctx, c.Apiserver, c.Kubelets, o.images, rt...)
			if err != nil {
				return err
			}
			all.Add(b, b.Nodes*max(1, o.matrixParallel))
		}
	}
	if err := capacity.CheckDiskFits(ctx, all); err != nil {
		return usagef("%v", err)
	}
	return nil
}
