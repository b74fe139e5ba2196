package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/runner"
)

func init() {
	register(command{name: "run", summary: "run the conformance suites on a new cluster (--apiserver, --kubelets) or an existing one (--kubeconfig)", run: runSuite})
}

type runOptions struct {
	name, apiserver, kubeconfig, labelFilter, junitDir string
	suiteBinary, agentImg, appArmorNode                string
	suites, kubelets                                   []string
	keep, parallel, buildSuites                        bool
	timeout                                            time.Duration
	images                                             nodeImageFlag
	gates                                              featureGatesFlag
}

func runSuite(ctx context.Context, args []string) error {
	fs := newFlagSet("run")
	o := runOptions{images: nodeImageFlag{}, gates: featureGatesFlag{}}
	fs.StringVar(&o.name, "name", "skewproof-run", "cluster name (a new cluster), or the name recorded in the report (--kubeconfig)")
	fs.StringVar(&o.apiserver, "apiserver", "", "kube-apiserver version of a new cluster, e.g. 1.37.2")
	kubelets := fs.String("kubelets", "", "comma-separated kubelet versions of a new cluster, one worker each (default: the apiserver version)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "run against this existing cluster instead of creating one")
	fs.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'kubelet && !failure' or 'seccomp-kubelet-enforce' (ids with '/' replaced by '-')")
	fs.StringVar(&o.junitDir, "junit-dir", "_artifacts", "directory for junit-<cluster>.xml and the suite log")
	fs.BoolVar(&o.keep, "keep", false, "keep the cluster (and leftover namespaces) after the run")
	fs.BoolVar(&o.parallel, "parallel", true, "run the API server rules and each worker's kubelet rules in concurrent suite processes")
	ids := fs.String("ids", "", "comma-separated catalogue ids to run, e.g. seccomp/kubelet/enforce,seccomp/failure/row-4 (ANDed with --label-filter)")
	rerun := fs.String("rerun-failed", "", "a JUnit file of an earlier run: run only the specs that failed there, on the nodes they failed on")
	suites := fs.String("suites", "seccomp,apparmor", "comma-separated suites to run one after the other: "+strings.Join(runner.Suites, ", "))
	fs.StringVar(&o.suiteBinary, "suite-binary", "", "the e2e binary (default: "+runner.SuiteBinaryName+" beside this executable, as 'make build' puts it)")
	fs.BoolVar(&o.buildSuites, "build-suites", false, "compile the e2e binary from the source tree with 'go test -c "+runner.SuitePackage+"' (development; needs Go)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "limit for the suite run")
	fs.StringVar(&o.agentImg, "agent-image", "", "node agent image present on every node (default: built from this binary and loaded into the kind node containers; required with --kubeconfig when the nodes are not local containers)")
	fs.StringVar(&o.appArmorNode, "apparmor-node", "", appArmorNodeUsage)
	fs.Var(o.gates, "feature-gates", "feature gates for every component of a new cluster, e.g. AppArmor=false (where the version still allows it)")
	fs.Var(o.images, "node-image", "prebuilt node image for the control plane (REF), or for one kubelet version (VERSION=REF); repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	o.kubelets = splitList(*kubelets)
	var idSel, rerunSel string
	if *ids != "" {
		idSel = runner.IDFilter(splitList(*ids), nil)
	}
	if *rerun != "" {
		f, err := runner.FailedFilter(*rerun)
		if err != nil {
			return usagef("--rerun-failed: %v", err)
		}
		rerunSel = f
	}
	o.labelFilter = runner.Select(idSel, rerunSel, o.labelFilter)
	for _, n := range splitList(*suites) {
		if !slices.Contains(runner.Suites, n) {
			return usagef("--suites: %q is not a suite (%s)", n, strings.Join(runner.Suites, ", "))
		}
		o.suites = append(o.suites, n)
	}
	if o.suiteBinary != "" {
		if fi, err := os.Stat(o.suiteBinary); err != nil || fi.IsDir() {
			return usagef("--suite-binary %s: not a file", o.suiteBinary)
		}
	}
	switch {
	case len(o.suites) == 0:
		return usagef("--suites: give at least one suite, e.g. seccomp")
	case o.suiteBinary != "" && o.buildSuites:
		return usagef("give --suite-binary or --build-suites, not both")
	case o.kubeconfig != "" && o.appArmorNode != "":
		return usagef("--apparmor-node adds a node to a new cluster; it cannot join an existing one (--kubeconfig)")
	case o.kubeconfig != "" && len(o.gates) > 0:
		return usagef("--feature-gates applies to a new cluster; an existing cluster (--kubeconfig) keeps its own")
	case o.kubeconfig != "" && (o.apiserver != "" || len(o.kubelets) > 0):
		return usagef("give either --kubeconfig (an existing cluster) or --apiserver/--kubelets (a new one), not both")
	case o.kubeconfig == "" && o.apiserver == "":
		return usagef("give --apiserver and --kubelets to create a cluster, or --kubeconfig to use an existing one")
	case o.kubeconfig != "":
		if _, err := os.Stat(o.kubeconfig); err != nil {
			return usagef("--kubeconfig: %v", err)
		}
	default:
		o.apiserver = strings.TrimPrefix(o.apiserver, "v")
		if len(o.kubelets) == 0 {
			o.kubelets = []string{o.apiserver}
		}
		if err := validName(o.name); err != nil {
			return err
		}
		needSources := false
		for _, k := range append([]string{""}, o.kubelets...) {
			if _, ok := o.images[k]; !ok {
				needSources = true
			}
		}
		if err := checkAppArmorNode(ctx, o.apiserver, o.appArmorNode); err != nil {
			return err
		}
		if err := checkPair(ctx, o.apiserver, o.kubelets, needSources); err != nil {
			return err
		}
		if err := o.gates.check(o.apiserver, o.kubelets); err != nil {
			return err
		}
	}
	if o.timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	return o.run(ctx)
}

func (o runOptions) run(ctx context.Context) error {
	p := clusters.NewProgress(os.Stderr)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ro := runner.Options{Name: o.name, Kubeconfig: o.kubeconfig, Suites: o.suites, LabelFilter: o.labelFilter,
		JUnitDir: o.junitDir, Keep: o.keep, Parallel: o.parallel, Timeout: o.timeout, AgentImage: o.agentImg,
		AgentBinary: exe, Mode: "existing-cluster", Command: os.Args, Progress: p}
	if o.kubeconfig == "" {
		ro.Mode = "new-cluster"
		host := clusters.DetectHost()
		ro.Up = clusters.UpOptions{APIServer: o.apiserver, Kubelets: o.kubelets, NodeImages: o.images,
			CgroupV1: host.CgroupVersion == 1, FeatureGates: o.gates, AppArmorHost: host.AppArmor, AppArmorNode: o.appArmorNode}
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
		defer os.RemoveAll(tmp)
		if ro.SuiteBinary, err = runner.BuildSuiteBinary(ctx, p, tmp); err != nil {
			return err
		}
	default:
		if ro.SuiteBinary, err = runner.FindSuiteBinary(exe); err != nil {
			return err
		}
	}
	out, err := runner.Run(ctx, ro)
	if len(out.Results) > 0 || out.JUnit != "" {
		fmt.Println()
		reports.WriteSummary(os.Stdout, out.Results)
		fmt.Printf("JUnit: %s\nlogs:  %s\n", out.JUnit, strings.Join(out.Logs, " "))
	}
	return err
}
