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

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/skew/release"
	senv "github.com/skewproof/skewproof/suites/env"
)

type runOptions struct {
	// The flags the in-cluster entrypoint takes too.
	runner.SharedFlags
	apiserver, kubeconfig, junitDir      string
	suiteBinary, appArmorNode, umlKernel string
	kubeletList, ids, rerun, matrix      string
	matrixRuntimeList                    string
	matrixRuntimes                       []noderuntime.Runtime
	ociArgs                              []string
	runtimes                             []noderuntime.Runtime
	ociRuntimes                          map[string]string
	suites, kubelets                     []string
	keep, parallel, buildSuites          bool
	removeImages                         bool   // --remove-images true (auto: decided by checkDisk)
	removeImagesArg                      string // --remove-images: true, false or auto
	matrixParallel                       int
	matrixParallelArg                    string
	plan                                 []release.Cluster
	appArmorNodes                        []noderuntime.Worker // --apparmor-node, resolved
	matrixAppArmorNodes                  []bool               // --matrix: per leg, an AppArmor node per worker
	imageArgs, gateArgs                  []string
	images                               map[string]string
	gates                                map[string]bool
}

func newRunCmd() *cobra.Command {
	o := runOptions{SharedFlags: runner.CLIDefaults()}
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
	o.BindFlags(fs)
	fs.StringVar(&o.apiserver, "apiserver", "", "kube-apiserver version of a new cluster, e.g. 1.37.2")
	fs.StringVar(&o.kubeletList, "kubelets", "", kubeletsUsage)
	fs.StringArrayVar(&o.ociArgs, "oci-runtime", nil, ociRuntimeUsage)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "run against this existing cluster instead of creating one")
	fs.StringVar(&o.junitDir, "junit-dir", "_artifacts", "directory for the results: junit-<name>.xml (and each suite's), run.json and the suites' logs")
	fs.BoolVar(&o.keep, "keep", false, "keep what the run created: the new cluster, or on an existing one (--kubeconfig) the suites' namespaces and the fixture profiles")
	fs.StringVar(&o.removeImagesArg, "remove-images", "false", "once a new cluster is deleted, remove its node images (the build cache stays: a later run reassembles them from cached binaries in seconds); for a matrix of many clusters, such as --matrix history, on a small disk. auto: only when the disk would not hold the node images of every cluster of the run, checked before anything is built")
	fs.Lookup("remove-images").NoOptDefVal = "true"
	fs.BoolVar(&o.parallel, "parallel", true, "run the suites at the same time, each in concurrent processes (the API server rules in one, each worker's kubelet rules in others); false: one suite after the other")
	fs.StringVar(&o.ids, "ids", "", "comma-separated catalogue ids to run, e.g. seccomp/kubelet/enforce,seccomp/failure/row-4 (ANDed with --label-filter)")
	fs.StringVar(&o.rerun, "rerun-failed", "", "a JUnit file of an earlier run, or a directory holding it (a run's --junit-dir, a report's --out): run only the specs that failed or were flaky there, on the nodes they failed on")
	fs.StringVar(&o.suiteBinary, "suite-binary", "", "the e2e binary (default: "+runner.SuiteBinaryName+" beside this executable, as 'make build' puts it)")
	fs.BoolVar(&o.buildSuites, "build-suites", false, "compile the e2e binary from the source tree with 'go test -c "+runner.SuitePackage+"' (development; needs Go)")
	fs.StringVar(&o.appArmorNode, "apparmor-node", appArmorNodesAuto, appArmorNodeUsage)
	fs.StringVar(&o.umlKernel, "uml-kernel", "", umlKernelUsage)
	fs.StringArrayVar(&o.gateArgs, "feature-gates", nil, "feature gates for every component of a new cluster, e.g. AppArmor=false (where the version still allows it)")
	fs.StringArrayVar(&o.imageArgs, "node-image", nil, nodeImageUsage)
	fs.StringVar(&o.matrix, "matrix", "", "run every cluster 'skewproof matrix' plans for these kube-apiserver minors, e.g. 1.36..1.37, each named --name and its minor (skewproof-run-1-37) with its results in --junit-dir/<that name>/, then merge them into --junit-dir/report/")
	fs.StringVar(&o.matrixRuntimeList, "matrix-runtimes", "", matrixRuntimesUsage)
	fs.StringVar(&o.matrixParallelArg, "matrix-parallel", "1", "with --matrix: clusters at once, or auto: one per host core and one more, as many as the host's free memory and inotify instances fit (preflight refuses a number beyond what they fit)")
	return c
}

func (o runOptions) run(ctx context.Context) error {
	p := progress.New(os.Stderr)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ro := runner.Options{Name: o.Name, Kubeconfig: o.kubeconfig, Suites: o.suites, LabelFilter: o.LabelFilter,
		JUnitDir: o.junitDir, Keep: o.keep, RemoveImages: o.removeImages, Parallel: o.parallel, Timeout: o.Timeout, AgentImage: o.AgentImage,
		AgentBinary: exe, Mode: "existing-cluster", Command: os.Args, Progress: p, FlakeAttempts: o.FlakeAttempts,
		AllowFlaky: o.AllowFlaky, AllowedNotReadyNodes: o.AllowedNotReadyNodes, Certify: o.Certify}
	if o.kubeconfig == "" {
		// Docker first: without it nothing can start, and nothing need be
		// cleaned up.
		if err := dockerReady(ctx); err != nil {
			return err
		}
		if err := appArmorHostReady(len(o.appArmorNodes) > 0 || slices.Contains(o.matrixAppArmorNodes, true), o.umlKernel); err != nil {
			return err
		}
		if ro.RemoveImages, err = o.checkDisk(ctx); err != nil {
			return err
		}
		ro.Mode = "new-cluster"
		ro.Up = clusters.UpOptions{APIServer: o.apiserver, Kubelets: o.kubelets, Runtimes: o.runtimes, OCIRuntimes: o.ociRuntimes, NodeImages: o.images, FeatureGates: o.gates, AppArmorNodes: o.appArmorNodes, UMLKernel: o.umlKernel}
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
			return fmt.Errorf("%w (or --build-suites from the source tree)", err)
		}
	}
	// Its suites next: one the binary does not have is refused before
	// anything is built.
	if ro.Declarations, err = runner.Declarations(ctx, ro.SuiteBinary); err != nil {
		return err
	}
	suites, err := runner.ResolveSuites(ro.Declarations, ro.Suites, ro.Certify)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	ro.Suites = senv.Families(suites)
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
		if sel := ro.Selection().String(); sel != "" {
			fmt.Printf("narrowed: only the specs of %s were run (%s); run.json and the JUnit suites' properties say so\n", strings.Join(ro.Suites, ", "), sel)
		}
		for _, why := range runner.DescribeNotTested(out.NotTested) {
			fmt.Printf("not tested: %s\n", why)
		}
		if lines := reports.NotJudgedForHost(out.Results); len(lines) > 0 {
			for _, l := range lines {
				fmt.Printf("not judged (the host): %s\n", l)
			}
			if o.kubeconfig == "" && len(o.appArmorNodes) == 0 {
				fmt.Printf("not judged (the host): this run had no AppArmor node (--apparmor-node %s); on a host whose kernel has no AppArmor, --apparmor-node auto (the default) adds one per kubelet so that these are judged\n", o.appArmorNode)
			}
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
// is built (after Docker answers: the images it has decide what is built),
// and says whether each cluster's node images go with it: --remove-images,
// or with auto only when the disk would not hold every cluster's images.
func (o runOptions) checkDisk(ctx context.Context) (removeImages bool, err error) {
	plan := o.plan
	if len(plan) == 0 {
		plan = []release.Cluster{{Apiserver: o.apiserver, Kubelets: o.kubelets}}
	}
	var all capacity.Builds
	type legBuilds struct {
		images []string
		disks  int
	}
	var legs []legBuilds
	for i, c := range plan {
		// The workers' runtimes: --kubelets' own, or each of
		// --matrix-runtimes for every worker of a matrix cluster.
		perWorker := [][]noderuntime.Runtime{o.runtimes}
		if len(o.plan) > 0 && len(o.matrixRuntimes) > 0 {
			perWorker = nil
			for _, r := range o.matrixRuntimes {
				perWorker = append(perWorker, slices.Repeat([]noderuntime.Runtime{r}, len(c.Kubelets)))
			}
		}
		for _, rt := range perWorker {
			b, err := clusters.NewProvider(nil).PlanBuilds(ctx, c.Apiserver, c.Kubelets, o.images, rt...)
			if err != nil {
				return false, err
			}
			// An AppArmor node's disk is made with its node image.
			if len(b.NodeImages) > 0 {
				if len(o.plan) == 0 {
					b.AppArmorDisks = len(o.appArmorNodes)
				} else if i < len(o.matrixAppArmorNodes) && o.matrixAppArmorNodes[i] {
					b.AppArmorDisks = len(c.Kubelets)
				}
			}
			all.Add(b, b.Nodes*max(1, o.matrixParallel))
			legs = append(legs, legBuilds{b.NodeImages, b.AppArmorDisks})
		}
	}
	removeImages = o.removeImages
	if o.removeImagesArg == removeImagesAuto && !o.keep {
		err := capacity.CheckDiskFits(ctx, all)
		removeImages = err != nil && len(legs) > 1
		if removeImages {
			fmt.Fprintf(os.Stderr, "--remove-images auto: each cluster's node images go with it; the disk would not hold them all (%s)\n", reports.FirstLine(err.Error()))
		} else if len(legs) > 1 {
			fmt.Fprintf(os.Stderr, "--remove-images auto: the disk holds the node images of all %d clusters; they stay for the next run\n", len(legs))
		}
	}
	if removeImages {
		// Each cluster's node images (and AppArmor node disks) go with
		// it: the disk holds those of the clusters that run at once, the
		// largest counted.
		slices.SortFunc(legs, func(a, b legBuilds) int { return len(b.images) + b.disks - len(a.images) - a.disks })
		all.NodeImages, all.AppArmorDisks = nil, 0
		for _, l := range legs[:min(len(legs), max(1, o.matrixParallel))] {
			all.NodeImages = append(all.NodeImages, l.images...)
			all.AppArmorDisks += l.disks
		}
	}
	if err := capacity.CheckDiskFits(ctx, all); err != nil {
		return false, cli.Usagef("%v", err)
	}
	return removeImages, nil
}
