package main

import (
	"context"
	"errors"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/runner/schedule"
	"github.com/skewproof/skewproof/skew/release"
)

// check validates and completes the options of 'skewproof run' before
// anything is built or started; every error is a usage error.
func (o *runOptions) check(ctx context.Context) error {
	var err error
	if o.gates, err = featureGates(o.gateArgs); err != nil {
		return err
	}
	o.images = nodeImages(o.imageArgs)
	w, err := parseWorkers(splitList(o.kubeletList), o.ociArgs, o.matrixRuntimeList, o.appArmorNode)
	if err != nil {
		return err
	}
	o.kubelets, o.runtimes, o.ociRuntimes, o.matrixRuntimes = w.kubelets, w.runtimes, w.vendor, w.matrix
	if len(o.matrixRuntimes) > 0 && o.matrix == "" {
		return cli.Usagef("--matrix-runtimes fans the clusters of --matrix out over runtimes; for one cluster give each worker its runtime in --kubelets (VERSION@CRI+OCI)")
	}
	var idSel, rerunSel string
	if o.ids != "" {
		idSel = runner.IDFilter(splitList(o.ids), nil)
	}
	if o.rerun != "" {
		f, err := runner.FailedFilter(o.rerun)
		if err != nil {
			return cli.Usagef("--rerun-failed: %v; give the junit-<cluster>.xml of an earlier 'skewproof run' that had failures", err)
		}
		rerunSel = f
	}
	o.LabelFilter = schedule.Select(idSel, rerunSel, o.LabelFilter)
	o.suites = runner.ParseSuites(o.SuiteList)
	if o.suiteBinary != "" {
		if fi, err := os.Stat(o.suiteBinary); err != nil || fi.IsDir() {
			return cli.Usagef("--suite-binary %s: not a file", o.suiteBinary)
		}
	}
	// The settings every front end shares: the runner's own check.
	shared := runner.Options{Kubeconfig: o.kubeconfig, Suites: o.suites, Timeout: o.Timeout,
		FlakeAttempts: o.FlakeAttempts, AllowedNotReadyNodes: o.AllowedNotReadyNodes, LabelFilter: o.LabelFilter, AllowFlaky: o.AllowFlaky, Certify: o.Certify}
	if err := shared.Validate(); err != nil {
		return cli.Usagef("%v", err)
	}
	switch o.removeImagesArg {
	case "true":
		o.removeImages = true
	case "false", "", removeImagesAuto:
	default:
		return cli.Usagef("--remove-images %s: give true, false or auto", o.removeImagesArg)
	}
	switch {
	case o.suiteBinary != "" && o.buildSuites:
		return cli.Usagef("give --suite-binary or --build-suites, not both")
	case o.removeImages && o.keep:
		return cli.Usagef("--remove-images removes the node images of a deleted cluster; with --keep the cluster stays, and its images with it")
	case o.removeImages && o.kubeconfig != "":
		return cli.Usagef("--remove-images removes the node images of a cluster skewproof made; an existing cluster (--kubeconfig) keeps its own")
	case o.matrix != "":
		return o.checkMatrix(ctx)
	case o.kubeconfig != "" && !isWordOfAppArmorNode(o.appArmorNode), o.kubeconfig != "" && o.appArmorNode == appArmorNodesAll:
		return cli.Usagef("--apparmor-node adds nodes to a new cluster; they cannot join an existing one (--kubeconfig)")
	case o.kubeconfig != "" && o.umlKernel != "":
		return cli.Usagef("--uml-kernel is the kernel of the AppArmor nodes of a new cluster; an existing one (--kubeconfig) has its own kernels")
	case o.kubeconfig != "" && len(o.gates) > 0:
		return cli.Usagef("--feature-gates applies to a new cluster; an existing cluster (--kubeconfig) keeps its own")
	case o.kubeconfig != "" && (o.apiserver != "" || len(o.kubelets) > 0):
		return cli.Usagef("give either --kubeconfig (an existing cluster) or --apiserver/--kubelets (a new one), not both")
	case o.kubeconfig == "" && o.apiserver == "":
		return cli.Usagef("give --apiserver and --kubelets to create a cluster, or --kubeconfig to use an existing one")
	case o.kubeconfig != "":
		return checkKubeconfig(o.kubeconfig)
	default:
		return o.checkNewCluster(ctx)
	}
}

// checkKubeconfig says whether path is a readable kubeconfig that names a
// cluster, before anything is created; every error is a usage error.
func checkKubeconfig(path string) error {
	const remedy = "give the kubeconfig file of an existing cluster, e.g. from 'kind get kubeconfig --name NAME'"
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return cli.Usagef("--kubeconfig: %v; %s", err, remedy)
	case fi.IsDir():
		return cli.Usagef("--kubeconfig %s is a directory; %s", path, remedy)
	}
	if _, err := kubeclient.Config(path); err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // kubeclient's "reading kubeconfig PATH" says what this line says
		}
		if clientcmd.IsEmptyConfig(err) {
			return cli.Usagef("--kubeconfig %s names no cluster (no clusters, users or current-context); %s", path, remedy)
		}
		return cli.Usagef("--kubeconfig: %v; %s", err, remedy)
	}
	return nil
}

// checkNewCluster checks the versions, name and gates of a new cluster.
func (o *runOptions) checkNewCluster(ctx context.Context) error {
	o.apiserver = release.BareVersion(o.apiserver)
	if len(o.kubelets) == 0 {
		o.kubelets = []string{o.apiserver}
	}
	if err := validName(o.Name); err != nil {
		return err
	}
	needSources := false
	for _, k := range append([]string{""}, o.kubelets...) {
		if _, ok := o.images[k]; !ok {
			needSources = true
		}
	}
	aa, err := resolveAppArmorNodes(o.appArmorNode, workersOf(o.kubelets, o.runtimes), autoAddsAppArmorNodes(o.suites), o.ociRuntimes)
	if err != nil {
		return err
	}
	if o.umlKernel != "" && len(aa) == 0 {
		return cli.Usagef("--uml-kernel is the kernel of the AppArmor nodes: give --apparmor-node with it")
	}
	if err := checkAppArmorNodes(ctx, o.apiserver, aa); err != nil {
		return err
	}
	o.appArmorNodes = aa
	workers := len(o.kubelets) + len(aa)*umlNodeWorkers
	if err := capacity.CheckClusterFits(workers); err != nil {
		return cli.Usagef("%v", err)
	}
	if err := capacity.CheckInotifyFits(1, len(o.kubelets)); err != nil {
		return cli.Usagef("%v", err)
	}
	if err := checkPair(ctx, o.apiserver, o.kubelets, needSources); err != nil {
		return err
	}
	return checkGates(o.gates, o.apiserver, o.kubelets)
}
