package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/reports"
	rmatrix "github.com/skewproof/skewproof/reports/matrix"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/skew/served"
)

// checkMatrix plans the clusters of --matrix and checks that they can be
// built and that --matrix-parallel of them fit in the host's memory and
// its inotify instances.
func (o *runOptions) checkMatrix(ctx context.Context) error {
	switch {
	case o.kubeconfig != "" || o.apiserver != "" || len(o.kubelets) > 0:
		return cli.Usagef("--matrix plans its own clusters; leave out --kubeconfig, --apiserver and --kubelets")
	case !isWordOfAppArmorNode(o.appArmorNode) || len(o.images) > 0:
		return cli.Usagef("--apparmor-node VERSION,… and --node-image apply to one cluster; run that cluster without --matrix (--apparmor-node all, auto or off applies to every cluster of the matrix)")
	}
	if _, err := matrixParallel(o.matrixParallelArg, 1, 1); err != nil {
		return err
	}
	if err := validName(o.Name); err != nil {
		return err
	}
	var err error
	if o.plan, err = planMatrix(ctx, o.matrix); err != nil {
		return fmt.Errorf("--matrix: %w", err)
	}
	workers, kindWorkers := 0, 0
	o.matrixAppArmorNodes = make([]bool, len(o.plan))
	for i, c := range o.plan {
		if err := checkPair(ctx, c.Apiserver, c.Kubelets, true); err != nil {
			return err
		}
		if err := checkGates(o.gates, c.Apiserver, c.Kubelets); err != nil {
			return err
		}
		// Every leg's AppArmor nodes are its workers' (all); a runtime of
		// --matrix-runtimes changes their runtime, not their number.
		suites := o.suites
		if len(c.Suites) > 0 {
			// A preset's leg runs the asked suites its versions were read for.
			if suites != nil {
				suites = slices.DeleteFunc(slices.Clone(c.Suites), func(s string) bool { return !slices.Contains(o.suites, s) })
				if len(suites) == 0 {
					return cli.Usagef("--matrix %s: the cluster of kube-apiserver %s runs only %s (the suites whose rules were read at its versions), --suites asks for %s", o.matrix, c.Apiserver, strings.Join(c.Suites, ","), strings.Join(o.suites, ","))
				}
			} else {
				suites = c.Suites
			}
			o.plan[i].Suites = suites
		}
		aa, err := resolveAppArmorNodes(o.appArmorNode, workersOf(c.Kubelets, nil), autoAddsAppArmorNodes(suites), nil)
		if err != nil {
			return err
		}
		if len(aa) > 0 && (suites == nil || slices.Contains(suites, "apparmor")) {
			o.matrixAppArmorNodes[i] = true
			if err := checkAppArmorNodes(ctx, c.Apiserver, aa); err != nil {
				return err
			}
		}
		workers = max(workers, len(c.Kubelets)+len(aa)*umlNodeWorkers)
		kindWorkers = max(kindWorkers, len(c.Kubelets))
	}
	if o.umlKernel != "" && !slices.Contains(o.matrixAppArmorNodes, true) {
		return cli.Usagef("--uml-kernel is the kernel of the AppArmor nodes: give --apparmor-node with it")
	}
	if err := capacity.CheckClusterFits(workers); err != nil {
		return cli.Usagef("--matrix: %v", err)
	}
	fit, avail := capacity.ClustersThatFit(workers)
	fitInotify, inotifyLimit := capacity.ClustersThatFitInotify(kindWorkers)
	o.matrixParallel, _ = matrixParallel(o.matrixParallelArg, runtime.NumCPU(), min(fit, fitInotify))
	if o.matrixParallelArg == "auto" {
		inotify := ""
		if inotifyLimit > 0 {
			inotify = fmt.Sprintf("; inotify instances for %d (fs.inotify.max_user_instances %d)", fitInotify, inotifyLimit)
			if fitInotify < min(runtime.NumCPU()+1, fit) {
				inotify += ": fewer than the cores and memory allow; " + capacity.InotifyRemedy()
			}
		}
		fmt.Fprintf(os.Stderr, "--matrix-parallel auto: %d clusters at once (%d cores; memory for %d clusters of 1+%d nodes, %d MiB available%s)\n",
			o.matrixParallel, runtime.NumCPU(), fit, workers, avail, inotify)
	}
	if o.matrixParallel > fit {
		return cli.Usagef("--matrix-parallel %d: %d clusters of 1+%d nodes need %d MiB, the host has %d MiB available; %d fit",
			o.matrixParallel, o.matrixParallel, workers, o.matrixParallel*capacity.ClusterMemoryMiB(workers), avail, fit)
	}
	if err := capacity.CheckInotifyFits(o.matrixParallel, kindWorkers); err != nil {
		return cli.Usagef("--matrix-parallel %d: %v", o.matrixParallel, err)
	}
	return nil
}

// matrixParallel is the number of clusters --matrix-parallel arg asks for:
// a number, or auto, one per core of the host's cores and one more, as long
// as memory fits them (fit; at least one). The clusters' nodes are
// CPU-bound on a small host, but each cluster also waits (kind's create,
// its nodes' readiness, the API): on two cores the history preset took
// 28.4 min one cluster at a time, 18.0 min two at once (the cores idle 283
// of 2111 CPU-s) and 16.9 min three at once (idle 141 of 2007;
// docs/clusters/README.md).
func matrixParallel(arg string, cores, fit int) (int, error) {
	if arg == "auto" {
		return max(1, min(cores+1, fit)), nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		return 0, cli.Usagef("--matrix-parallel %s: give a number of clusters, at least 1, or auto", arg)
	}
	return n, nil
}

// planMatrix plans the clusters of a --matrix: a range of kube-apiserver
// minors (release.Matrix) or the preset "history" (skew.History).
func planMatrix(ctx context.Context, spec string) ([]release.Cluster, error) {
	var from, to release.Minor
	if spec != skew.HistoryPreset {
		var err error
		if from, to, err = release.ParseMinorRange(spec); err != nil {
			return nil, cli.Usagef("%v (or the preset %q)", err, skew.HistoryPreset)
		}
	}
	var list []*version.Version
	var err error
	if spec == skew.HistoryPreset {
		// Its releases are old: the proxy's list omits many of their patches.
		list, err = served.ProbeNewer(ctx, skew.HistoryMinors())
		// A pinned control plane is asked for by exact version.
		for _, v := range skew.HistoryPinned() {
			if err != nil {
				break
			}
			if err = served.Check(ctx, v); err == nil {
				list = append(list, v)
			}
		}
	} else {
		list, err = served.Versions(ctx)
	}
	if err != nil {
		return nil, err
	}
	var plan []release.Cluster
	if spec == skew.HistoryPreset {
		plan, err = skew.History(list)
	} else {
		plan, err = release.Matrix(list, from, to)
	}
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return plan, nil
}

// runMatrix runs every cluster of the plan, then merges their results into
// --junit-dir/report (merged JUnit, summary.json, matrix.md, matrix.html).
func (o runOptions) runMatrix(ctx context.Context, base runner.Options) error {
	base.Mode = "matrix"
	legs, runErr := runner.RunMatrix(ctx, runner.MatrixOptions{Base: base, Clusters: o.plan, Runtimes: o.matrixRuntimes, Parallel: o.matrixParallel, AppArmorNodes: o.matrixAppArmorNodes})
	var dirs []string
	fmt.Println()
	for _, l := range legs {
		status := reports.Count(l.Outcome.Results).String()
		if l.Err != nil {
			status += " (" + reports.FirstLine(l.Err.Error()) + ")"
		}
		fmt.Printf("%-22s kube-apiserver %-8s kubelets %-30s %s\n", l.Name, l.Cluster.Apiserver, strings.Join(l.Cluster.Kubelets, ",")+" on "+l.Runtime.String(), status)
		if _, err := os.Stat(l.Outcome.JUnit); l.Outcome.JUnit != "" && err == nil {
			dirs = append(dirs, l.Dir)
		}
	}
	if len(dirs) == 0 {
		return runErr
	}
	out := filepath.Join(o.junitDir, "report")
	g, err := rmatrix.Generate(rmatrix.Options{Inputs: dirs, Out: out})
	if err != nil {
		return fmt.Errorf("merging the matrix's results: %w (the runs' results stay in %s)", err, o.junitDir)
	}
	fmt.Printf("\n%s\nreport: %s (junit.xml, summary.json, matrix.md, matrix.html)\n", g.Headline(), out)
	return runErr
}
