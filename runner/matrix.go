package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/skew/release"
)

// MatrixOptions configure a run of every cluster of a version matrix
// (release.Matrix): one new cluster per kube-apiserver minor, each with the
// kubelets its skew window allows.
type MatrixOptions struct {
	// Base is every cluster's run; Name is the prefix of the cluster names
	// and JUnitDir the results directory that gets one directory per
	// cluster. Base.Up carries the host facts; its versions are the leg's.
	Base     Options
	Clusters []release.Cluster
	// Runtimes, when given, fan every cluster out over these container
	// runtimes: one cluster per runtime, every worker on it.
	Runtimes []noderuntime.Runtime
	// Parallel is how many clusters run at once (at least 1).
	Parallel int
	// AppArmorNodes, per cluster of Clusters, gives that cluster an
	// AppArmor node (User-Mode Linux) per worker, with the worker's kubelet
	// and runtime, so that the leg judges AppArmor enforcement at each of
	// its kubelets whatever the host's kernel.
	AppArmorNodes []bool
	// Output receives the legs' progress when they run at once, each line
	// prefixed with the leg's name (default os.Stderr).
	Output io.Writer
}

// Leg is one cluster of the matrix and what its run gave.
type Leg struct {
	Cluster release.Cluster
	// AppArmorNodes: the cluster has an AppArmor node per worker
	// (MatrixOptions.AppArmorNodes).
	AppArmorNodes bool
	// Runtime is every worker's runtime (the default without
	// MatrixOptions.Runtimes).
	Runtime noderuntime.Runtime
	Name    string
	Dir     string
	Outcome Outcome
	Err     error
}

// LegName is the name of a matrix cluster: the prefix and the API server's
// minor, e.g. skewproof-run-1-37.
func LegName(prefix string, c release.Cluster) string {
	v := c.Apiserver
	if i := strings.LastIndex(v, "."); strings.Count(v, ".") == 2 {
		v = v[:i]
	}
	return prefix + "-" + strings.ReplaceAll(v, ".", "-")
}

// legUp is the cluster of leg l: Base.Up with the leg's versions, its
// runtime on every worker, and with l.AppArmorNodes one AppArmor node per
// worker.
func (o MatrixOptions) legUp(l Leg) clusters.UpOptions {
	up := o.Base.Up
	up.APIServer, up.Kubelets, up.Runtimes, up.AppArmorNodes = l.Cluster.Apiserver, l.Cluster.Kubelets, nil, nil
	if !l.Runtime.IsDefault() {
		up.Runtimes = slices.Repeat([]noderuntime.Runtime{l.Runtime}, len(l.Cluster.Kubelets))
	}
	if l.AppArmorNodes {
		for _, k := range l.Cluster.Kubelets {
			up.AppArmorNodes = append(up.AppArmorNodes, noderuntime.Worker{Kubelet: k, Runtime: l.Runtime})
		}
	}
	return up
}

// RunMatrix runs the clusters of the matrix, Parallel at a time, each into
// its own directory under Base.JUnitDir, and returns every leg, failed ones
// included; the error joins the legs' errors. An interrupt (ctx cancelled)
// stops the legs that run (each deletes its cluster) and starts no other.
func RunMatrix(ctx context.Context, o MatrixOptions) ([]Leg, error) {
	if len(o.Clusters) == 0 {
		return nil, errors.New("the matrix has no cluster")
	}
	p := o.Base.Progress
	if p == nil {
		p = progress.New(nil)
	}
	out := o.Output
	if out == nil {
		out = os.Stderr
	}
	var outMu sync.Mutex
	n := max(o.Parallel, 1)
	var legs []Leg
	for i, c := range o.Clusters {
		aa := i < len(o.AppArmorNodes) && o.AppArmorNodes[i]
		if len(o.Runtimes) == 0 {
			legs = append(legs, Leg{Cluster: c, AppArmorNodes: aa, Name: LegName(o.Base.Name, c)})
		}
		for _, rt := range o.Runtimes {
			// The runtime in the name: skewproof-run-1-37-containerd2-crun.
			legs = append(legs, Leg{Cluster: c, AppArmorNodes: aa, Runtime: rt, Name: LegName(o.Base.Name, c) + "-" + strings.ReplaceAll(rt.String(), "+", "-")})
		}
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range legs {
		legs[i].Dir = filepath.Join(o.Base.JUnitDir, legs[i].Name)
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			legs[i].Err = fmt.Errorf("not started: %w", context.Cause(ctx))
			continue
		}
		wg.Add(1)
		go func(l *Leg) {
			defer wg.Done()
			defer func() { <-sem }()
			ro := o.Base
			ro.Name, ro.JUnitDir = l.Name, l.Dir
			if n > 1 {
				// Legs at once: each line says whose it is.
				ro.Progress = progress.New(progress.Prefixed(out, &outMu, l.Name+": "))
				ro.OnSpec = nil
			}
			ro.Up = o.legUp(*l)
			if len(l.Cluster.Suites) > 0 {
				ro.Suites = l.Cluster.Suites
			}
			p.Step("matrix: cluster %s (kube-apiserver %s, kubelets %s, runtime %s, suites %s) into %s", l.Name, l.Cluster.Apiserver,
				strings.Join(l.Cluster.Kubelets, " "), l.Runtime, strings.Join(ro.Suites, ","), l.Dir)
			l.Outcome, l.Err = Run(ctx, ro)
			if l.Err != nil {
				l.Err = fmt.Errorf("%s: %w", l.Name, l.Err)
			}
		}(&legs[i])
	}
	wg.Wait()
	var errs []error
	for _, l := range legs {
		errs = append(errs, l.Err)
	}
	return legs, errors.Join(errs...)
}
