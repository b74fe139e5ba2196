// What bringing a cluster up would build, for the disk check of package
// capacity before anything is built.

package nodeimage

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/skew/release"
)

// Plan says what Up would build for a cluster of one control plane at
// apiserver and one worker per kubelet; prebuilt maps a kubelet version
// ("" for the control plane) to a given node image; runtimes, when given,
// are the workers' runtimes (runtimes[i] is kubelets[i]'s; a worker on
// another runtime has a node image of its own).
func Plan(ctx context.Context, h command.Host, apiserver string, kubelets []string, prebuilt map[string]string, runtimes ...noderuntime.Runtime) (capacity.Builds, error) {
	b := capacity.Builds{Nodes: 1 + len(kubelets)}
	base, err := baseImageOf()
	if err != nil {
		return b, err
	}
	seen := map[string]bool{}
	version := func(v string, controlPlane bool) {
		v = release.BareVersion(v)
		if seen[v] {
			return
		}
		seen[v] = true
		done, _ := filepath.Glob(filepath.Join(filepath.Dir(base.Dir), "bin", "k8s.io_kubernetes-v"+v+"-*", ".complete"))
		if len(done) == 0 {
			b.Versions = append(b.Versions, v)
			if controlPlane {
				b.ControlPlane = append(b.ControlPlane, v)
			}
		}
	}
	for i, kl := range append([]string{""}, kubelets...) {
		if _, ok := prebuilt[kl]; ok {
			continue
		}
		spec := Spec{ControlPlane: apiserver, Kubelet: kl}
		if i > 0 && i <= len(runtimes) {
			spec.Runtime = runtimes[i-1]
		}
		// A user's OCI runtime's image is keyed by its digest as well: not
		// known here, so that image counts as one to build.
		oci := ociRuntime{name: spec.Runtime.OCIName(), nodePath: nodeOCIRuntimes[spec.Runtime.OCIName()]}
		ref, _ := nodeImageRef(base, spec, oci)
		if h.ImageExists(ctx, ref) || slices.Contains(b.NodeImages, spec.tag()) {
			continue
		}
		b.NodeImages = append(b.NodeImages, spec.tag())
		// The control plane's version first: a worker at the same
		// version takes its kubelet from that build.
		version(apiserver, true)
		version(spec.kubelet(), false)
		if !b.Base && !(h.ImageExists(ctx, base.Ref) && cache.Complete(base.Dir)) {
			b.Base = true
		}
	}
	return b, nil
}
