package main

import (
	"context"
	"strings"

	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/skew/served"
)

// checkPair validates an apiserver version and its kubelet versions before
// anything is built or started: syntax, skew policy, served sources.
// needSources is false when prebuilt node images are used.
func checkPair(ctx context.Context, apiserver string, kubelets []string, needSources bool) error {
	a, err := release.ParseVersion(apiserver)
	if err != nil {
		return cli.Usagef("--apiserver: %v", err)
	}
	for _, k := range kubelets {
		kv, err := release.ParseVersion(k)
		if err != nil {
			return cli.Usagef("--kubelets: %v", err)
		}
		if err := release.CheckSkew(a, kv); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	if !needSources {
		return nil
	}
	for _, v := range append([]string{apiserver}, kubelets...) {
		pv, _ := release.ParseVersion(v)
		if err := served.Check(ctx, pv); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	return nil
}

// splitList splits a comma-separated list of names or versions (without a
// leading "v").
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, release.BareVersion(f))
		}
	}
	return out
}

// featureGates parses the values of --feature-gates Name=true|false,…: set
// on every component of a new cluster.
func featureGates(values []string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, v := range values {
		if err := skew.ParseFeatureGates(v, gates); err != nil {
			return nil, cli.Usagef("--feature-gates: %v", err)
		}
	}
	return gates, nil
}

// checkGates says whether every component of the cluster (apiserver and the
// kubelets) accepts the gates.
func checkGates(gates map[string]bool, apiserver string, kubelets []string) error {
	for _, v := range append([]string{apiserver}, kubelets...) {
		ver, err := release.ParseVersion(release.BareVersion(v))
		if err != nil {
			continue // reported by the version checks
		}
		for k, val := range gates {
			if err := skew.CheckFeatureGate(k, val, ver); err != nil {
				return cli.Usagef("--feature-gates: %v", err)
			}
		}
	}
	return nil
}

const nodeImageUsage = "prebuilt node image for the control plane (REF), or for one kubelet version (VERSION=REF); repeatable"

// nodeImages parses the values of --node-image: REF for the control plane,
// VERSION=REF for the nodes of one kubelet version.
func nodeImages(values []string) map[string]string {
	m := map[string]string{}
	for _, s := range values {
		if k, v, ok := strings.Cut(s, "="); ok && !strings.Contains(k, "/") && !strings.Contains(k, ":") {
			m[release.BareVersion(k)] = v
		} else {
			m[""] = s
		}
	}
	return m
}

// kubeletsUsage is the help of --kubelets (run and cluster up).
const kubeletsUsage = "comma-separated workers of a new cluster, one each: a kubelet version, optionally with its container runtime as VERSION[@CRI][+OCI], e.g. 1.34.4,1.37.2+crun,1.37.2@containerd2+myruntime,1.37.2@crio+crun (CRI: containerd, Debian's 1.7, the default, containerd2, 2.4 built from source, or crio, CRI-O 1.34 built from source; OCI: runc, the default, crun, or a runtime given with --oci-runtime) (default: the apiserver version)"

// matrixRuntimesUsage is the help of --matrix-runtimes.
const matrixRuntimesUsage = "with --matrix: run every cluster once per runtime, comma-separated CRI[+OCI] or +OCI, e.g. default,containerd2,+crun,+myruntime (every worker of that cluster on it; the cluster name ends in the runtime)"

// ociRuntimeUsage is the help of --oci-runtime.
const ociRuntimeUsage = "an OCI runtime binary of yours, NAME=PATH: it goes into the node images of the workers whose --kubelets entry names it (VERSION+NAME), where it runs every container (also as runtime handler NAME); repeatable"

// workerArgs are the workers of --kubelets, the OCI runtimes of
// --oci-runtime and the runtimes of --matrix-runtimes, read together.
type workerArgs struct {
	kubelets []string
	// runtimes are each worker's runtime; nil when all have the default.
	runtimes []noderuntime.Runtime
	// vendor maps the name of each OCI runtime the user provides to its path.
	vendor map[string]string
	// matrix are the runtimes every matrix cluster runs once on.
	matrix []noderuntime.Runtime
}

// parseWorkers reads the entries of --kubelets, the values of
// --oci-runtime and the list of --matrix-runtimes; an OCI runtime of the
// user's that none of them nor the --apparmor-node entries (appArmorNode,
// VERSION[@CRI][+OCI] each; resolveAppArmorNodes reads them) names is
// refused.
func parseWorkers(entries, ociArgs []string, matrixList, appArmorNode string) (workerArgs, error) {
	var w workerArgs
	for _, a := range ociArgs {
		name, path, err := noderuntime.ParseVendorOCI(a)
		if err != nil {
			return w, cli.Usagef("--oci-runtime %v", err)
		}
		if w.vendor == nil {
			w.vendor = map[string]string{}
		}
		w.vendor[name] = path
	}
	used := map[string]bool{}
	seen := map[noderuntime.Runtime]bool{}
	for _, e := range splitList(matrixList) {
		r, err := noderuntime.Parse(e, w.vendor)
		if err != nil {
			return w, cli.Usagef("--matrix-runtimes %q: %v", e, err)
		}
		if !seen[r] {
			seen[r] = true
			w.matrix = append(w.matrix, r)
		}
		used[r.OCI] = true
	}
	custom := false
	for _, e := range entries {
		wk, err := noderuntime.ParseWorker(e, w.vendor)
		if err != nil {
			return w, cli.Usagef("--kubelets %v", err)
		}
		w.kubelets = append(w.kubelets, release.BareVersion(wk.Kubelet))
		w.runtimes = append(w.runtimes, wk.Runtime)
		used[wk.Runtime.OCI] = true
		custom = custom || !wk.Runtime.IsDefault()
	}
	if !isWordOfAppArmorNode(appArmorNode) {
		for _, e := range splitList(appArmorNode) {
			if wk, err := noderuntime.ParseWorker(e, w.vendor); err == nil {
				used[wk.Runtime.OCI] = true
			}
		}
	}
	for name := range w.vendor {
		if !used[name] {
			return w, cli.Usagef("--oci-runtime %s: no --kubelets, --apparmor-node or --matrix-runtimes entry runs it; name it there, e.g. --kubelets 1.37.2+%s", name, name)
		}
	}
	if !custom {
		w.runtimes = nil
	}
	return w, nil
}
