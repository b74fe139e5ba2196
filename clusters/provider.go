package clusters

import (
	"context"

	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/progress"
)

// Provider makes and removes skewproof's clusters on this host's Docker
// daemon, builds their node images offline and loads images into their
// nodes, like kind's cluster.Provider (whose Go packages it drives). As
// kind's holds its internal provider and logger, a Provider holds the host
// it works on: the Docker CLI every step runs and where the steps are
// reported, handed down to the builders in clusters/internal. What needs
// neither is a function (AppArmorNodeReady, AppArmorNodeRunning,
// SaveAppArmorNodeConsoles).
type Provider struct {
	host command.Host
}

// NewProvider returns a Provider that runs the Docker CLI on PATH and
// reports its steps (builds, cluster boots, clean-ups, kind's errors) to p;
// a nil p reports nothing.
func NewProvider(p *progress.Progress) *Provider { return &Provider{host: command.Host{Progress: p}} }

// Up builds what is missing, creates the cluster through kind's Go packages,
// brings pod networking up and waits until every node is Ready and every
// kube-system pod is ready. On error or interrupt it deletes what it created.
// A cluster of that name that exists already is refused (ExistsError).
func (p *Provider) Up(ctx context.Context, o UpOptions) (*Cluster, error) {
	return up(ctx, p.host, o)
}

// Down deletes a cluster: its nodes (through kind), its AppArmor node, its
// Docker network and its default kubeconfig file (kubeconfig "" is
// defaultKubeconfig(name)). Deleting a cluster that does not exist is not
// an error; a failed attempt is made again, twice.
func (p *Provider) Down(ctx context.Context, name, kubeconfig string) error {
	return down(ctx, p.host, name, kubeconfig)
}

// List returns the names of the clusters that exist (kind clusters on a
// skewproof network or with skewproof node images, and clusters with an
// AppArmor node on this host).
func (p *Provider) List(ctx context.Context) ([]string, error) { return list(ctx, p.host) }

// ListOwned is List with each cluster's owner and state.
func (p *Provider) ListOwned(ctx context.Context) ([]Listed, error) { return listOwned(ctx, p.host) }

// NodeNames lists the nodes of a skewproof cluster: its kind node
// containers and its User-Mode Linux nodes.
func (p *Provider) NodeNames(ctx context.Context, name string) ([]string, error) {
	return nodeNames(ctx, p.host, name)
}

// IsLocalNode reports whether a node is a kind node container or a UML node
// of this host, that commands can run on and images be loaded into.
func (p *Provider) IsLocalNode(ctx context.Context, node string) bool {
	return isLocalNode(ctx, p.host, node)
}

// LoadImageArchive imports the image ref from a "docker save" archive
// (internal/image's WriteBinary writes one), pinned, into the container
// runtime of each named node. Nothing is pulled or pushed.
func (p *Provider) LoadImageArchive(ctx context.Context, archive, ref string, nodes []string) error {
	return loadImageArchive(ctx, p.host, archive, ref, nodes)
}

// BuildNodeImage builds (or finds in the cache) the node image of worker w
// in a cluster whose control plane is at apiserver, as Up would for it, and
// returns its reference.
func (p *Provider) BuildNodeImage(ctx context.Context, apiserver string, w noderuntime.Worker) (string, error) {
	return nodeimage.Build(ctx, p.host, nodeimage.Spec{ControlPlane: apiserver, Kubelet: w.Kubelet, Runtime: w.Runtime})
}

// PlanBuilds says what Up would build for a cluster of one control plane
// at apiserver and one worker per kubelet, for capacity.CheckDiskFits;
// prebuilt maps a kubelet version ("" for the control plane) to a given
// node image; runtimes, when given, are the workers' runtimes (runtimes[i]
// is kubelets[i]'s; a worker on another runtime has a node image of its
// own).
func (p *Provider) PlanBuilds(ctx context.Context, apiserver string, kubelets []string, prebuilt map[string]string, runtimes ...noderuntime.Runtime) (capacity.Builds, error) {
	return nodeimage.Plan(ctx, p.host, apiserver, kubelets, prebuilt, runtimes...)
}

// ListImages describes skewproof's node and base images and its cache.
func (p *Provider) ListImages(ctx context.Context) (string, error) {
	return nodeimage.List(ctx, p.host)
}

// PruneImages removes skewproof's images from Docker and its build cache,
// and the AppArmor node disks of images that are gone. Images used by
// existing clusters are kept by Docker (it refuses).
func (p *Provider) PruneImages(ctx context.Context) error {
	defer sweepDisks(ctx, p.host)
	return nodeimage.Prune(ctx, p.host)
}

// PruneNodeImages keeps the newest keep node images (by creation time) and
// removes the others, with their AppArmor node disks; the build cache
// stays, so a removed image is reassembled from cached binaries when needed
// again. Images in use by a cluster are kept by Docker (it refuses), and
// said so.
func (p *Provider) PruneNodeImages(ctx context.Context, keep int) error {
	defer sweepDisks(ctx, p.host)
	return nodeimage.PruneNodes(ctx, p.host, keep)
}

// RemoveNodeImages removes node images (a Cluster's Images) from Docker,
// with their AppArmor node disks; the build cache stays, so a removed
// image is reassembled from cached binaries when needed again. An image a
// cluster still uses is kept by Docker (it refuses), and said so.
func (p *Provider) RemoveNodeImages(ctx context.Context, refs []string) error {
	defer sweepDisks(ctx, p.host)
	return nodeimage.Remove(ctx, p.host, refs)
}

// Preflight checks that this host can run clusters: Docker, a privileged
// container, cgroups, seccomp, AppArmor, disk, memory.
func (p *Provider) Preflight(ctx context.Context) Report { return preflight(ctx, p.host) }

// AppArmorNodeReady says what this host lacks to run an AppArmor node
// (UpOptions.AppArmorNode; one line with the remedy), nil when nothing.
// kernel is the UML kernel a user gives, "" for the one skewproof builds
// (it then checks the build's tools unless the kernel is cached).
func AppArmorNodeReady(kernel string) error { return appArmorNodeReady(kernel) }

// AppArmorNodeKernel returns the User-Mode Linux kernel of AppArmor nodes,
// building it first when it is not cached (minutes, with progress lines).
func (p *Provider) AppArmorNodeKernel(ctx context.Context) (string, error) {
	return appArmorNodeKernel(ctx, p.host)
}

// AppArmorNodeRunning reports whether a cluster's AppArmor node runs on
// this host.
func AppArmorNodeRunning(cluster string) bool { return appArmorNodeRunning(cluster) }

// SaveAppArmorNodeConsoles copies the console logs of a cluster's AppArmor
// nodes into dir (as <node>-console.log) and returns the files written.
func SaveAppArmorNodeConsoles(cluster, dir string) []string {
	return saveAppArmorNodeConsoles(cluster, dir)
}
