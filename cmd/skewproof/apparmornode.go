package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/skew/release"
)

// The words --apparmor-node takes besides a list of workers.
const (
	// appArmorNodesAuto, the default of 'run' on a new cluster: all on a
	// host whose kernel has no AppArmor when the run has the AppArmor
	// suite; none on one whose kernel has it (its kind nodes enforce
	// AppArmor themselves), or for a run without that suite (the AppArmor
	// nodes would judge nothing: JudgedOn leaves seccomp to the kind
	// workers).
	appArmorNodesAuto = "auto"
	// appArmorNodesAll: one AppArmor node per worker of --kubelets (each
	// kubelet version and runtime once).
	appArmorNodesAll = "all"
	// appArmorNodesOff: none.
	appArmorNodesOff = "off"
)

// removeImagesAuto is --remove-images auto: only when the disk needs it.
const removeImagesAuto = "auto"

const appArmorNodeUsage = "workers whose kernel is User-Mode Linux with AppArmor enabled, added to a new cluster so that AppArmor is enforced on a host whose kernel has none: 'all' (one per --kubelets entry: each kubelet version and runtime), a comma-separated list of kubelet versions, each optionally with its container runtime as in --kubelets (e.g. 1.34.4,1.37.2@crio+crun), 'off', or 'auto' (all on a host without AppArmor when the run has the AppArmor suite, else off). skewproof builds the kernel once from Debian's kernel source; 'sudo hack/setup-host.sh --uml' installs what that needs"

// umlNodeWorkers is what one AppArmor node counts for in the host's memory,
// in kind workers: a User-Mode Linux node has 2 GiB of its own
// (clusters/internal/uml).
var umlNodeWorkers = 2048/capacity.WorkerMemoryMiB + 1

// workersOf pairs kubelet versions with their runtimes (runtimes may be
// nil: every worker on the default).
func workersOf(kubelets []string, runtimes []noderuntime.Runtime) []noderuntime.Worker {
	ws := make([]noderuntime.Worker, len(kubelets))
	for i, k := range kubelets {
		ws[i].Kubelet = release.BareVersion(k)
		if i < len(runtimes) {
			ws[i].Runtime = runtimes[i]
		}
	}
	return ws
}

// autoAddsAppArmorNodes says whether --apparmor-node auto adds AppArmor
// nodes to a run of suites (nil: a cluster alone, 'cluster up') on this
// host.
func autoAddsAppArmorNodes(suites []string) bool {
	return !nodefacts.Host().AppArmor && (suites == nil || slices.Contains(suites, "apparmor"))
}

// resolveAppArmorNodes reads --apparmor-node (spec) for a new cluster of
// workers: the workers of its AppArmor nodes, none for "off" (and for
// "auto" unless auto says so: autoAddsAppArmorNodes), one per distinct
// worker for "all" (and "auto" when auto), else the listed ones (vendor:
// the --oci-runtime binaries).
func resolveAppArmorNodes(spec string, workers []noderuntime.Worker, auto bool, vendor map[string]string) ([]noderuntime.Worker, error) {
	switch strings.TrimSpace(spec) {
	case "", appArmorNodesOff:
		return nil, nil
	case appArmorNodesAuto:
		if !auto {
			return nil, nil
		}
		fallthrough
	case appArmorNodesAll:
		var out []noderuntime.Worker
		for _, w := range workers {
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
		return out, nil
	}
	var out []noderuntime.Worker
	for _, e := range splitList(spec) {
		if e == appArmorNodesAll || e == appArmorNodesAuto || e == appArmorNodesOff {
			return nil, cli.Usagef("--apparmor-node %q: %q stands alone, not in a list", spec, e)
		}
		w, err := noderuntime.ParseWorker(e, vendor)
		if err != nil {
			return nil, cli.Usagef("--apparmor-node %v", err)
		}
		w.Kubelet = release.BareVersion(w.Kubelet)
		if slices.Contains(out, w) {
			return nil, cli.Usagef("--apparmor-node %q names %s twice", spec, w)
		}
		out = append(out, w)
	}
	return out, nil
}

// isWordOfAppArmorNode says whether spec is one of the words of
// --apparmor-node (auto, all, off) or empty, as opposed to a list.
func isWordOfAppArmorNode(spec string) bool {
	switch strings.TrimSpace(spec) {
	case "", appArmorNodesAuto, appArmorNodesAll, appArmorNodesOff:
		return true
	}
	return false
}

// checkAppArmorNodes checks the AppArmor nodes of a new cluster: versions
// the skew policy allows with the apiserver.
func checkAppArmorNodes(ctx context.Context, apiserver string, nodes []noderuntime.Worker) error {
	if len(nodes) == 0 {
		return nil
	}
	var versions []string
	for _, w := range nodes {
		versions = append(versions, w.Kubelet)
	}
	if err := checkPair(ctx, apiserver, versions, true); err != nil {
		return fmt.Errorf("--apparmor-node: %w", err)
	}
	return nil
}

// appArmorHostReady says what this host lacks to run AppArmor nodes
// (kernel: --uml-kernel), once Docker answers: without Docker nothing
// runs, and that is said first.
func appArmorHostReady(want bool, kernel string) error {
	if !want {
		return nil
	}
	if err := clusters.AppArmorNodeReady(kernel); err != nil {
		return cli.Usagef("--apparmor-node: %v (or leave the AppArmor nodes out: --apparmor-node off)", err)
	}
	return nil
}
