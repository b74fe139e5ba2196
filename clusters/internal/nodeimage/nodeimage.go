package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/gobuild"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/internal/image"
	"github.com/skewproof/skewproof/internal/owner"
	"github.com/skewproof/skewproof/skew/release"
)

// A node image is built in three steps, one file each: the component images
// kubeadm needs (componentimages.go), the files added to the base image
// (nodefiles.go: binaries, containerd configuration, restricted runtimes),
// and the assembly in a container of the base image (assemble.go).

// Spec names what goes into a node image.
type Spec struct {
	// ControlPlane is the Kubernetes version of the control plane: kubeadm,
	// kubectl and every image kubeadm schedules come from it.
	ControlPlane string
	// Kubelet is the kubelet version of the node (defaults to ControlPlane).
	Kubelet string
	// Runtime is the node's container runtime (zero: the default).
	Runtime noderuntime.Runtime
	// OCIRuntimes are the OCI runtimes the user provides, by name (the
	// path of each on this host); Runtime.OCI may name one.
	OCIRuntimes map[string]string
}

func (s Spec) kubelet() string {
	if s.Kubelet == "" {
		return s.ControlPlane
	}
	return s.Kubelet
}

// isControlPlane reports whether the image is for a control-plane node
// (kubelet at the control-plane version), which also holds the images of the
// control-plane components.
func (s Spec) isControlPlane() bool {
	return release.BareVersion(s.kubelet()) == release.BareVersion(s.ControlPlane) && s.Runtime.IsDefault()
}

// tag is the human part of the image name, e.g. v1.37.2-kubelet-v1.34.4,
// or v1.37.2-kubelet-v1.34.4-containerd2-crun with another runtime.
func (s Spec) tag() string {
	t := "v" + release.BareVersion(s.ControlPlane)
	if !s.isControlPlane() {
		t += "-kubelet-v" + release.BareVersion(s.kubelet())
	}
	if !s.Runtime.IsDefault() {
		t += "-" + s.Runtime.CRIName() + "-" + s.Runtime.OCIName()
	}
	return t
}

// BuildContainerPrefix starts the name of the temporary containers that
// node images are assembled in.
const BuildContainerPrefix = "skewproof-build-"

// nodeImageRevision changes whenever the node-image assembly changes.
const nodeImageRevision = "3"

// nodeImageRepo is the repository of the node images skewproof builds.
const nodeImageRepo = "skewproof-node"

// Build builds (or finds in the cache) the node image for spec and
// returns its reference.
func Build(ctx context.Context, h command.Host, spec Spec) (string, error) {
	p := h.Progress
	if !slices.Contains(noderuntime.CRIRuntimes(), spec.Runtime.CRIName()) {
		return "", fmt.Errorf("node image CRI runtime %q: not one skewproof builds (%s)", spec.Runtime.CRI, strings.Join(noderuntime.CRIRuntimes(), ", "))
	}
	named, err := baseImageOf()
	if err != nil {
		return "", err
	}
	oci, err := resolveOCI(spec.Runtime, spec.OCIRuntimes)
	if err != nil {
		return "", err
	}
	ref, key := nodeImageRef(named, spec, oci)
	if h.ImageExists(ctx, ref) {
		p.Step("node image %s: cached", ref)
		return ref, nil
	}
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	unlock, err := cache.Lock(ctx, filepath.Join(cacheDir, "node-image-"+key), p.Step)
	if err != nil {
		return "", err
	}
	defer unlock()
	if h.ImageExists(ctx, ref) {
		p.Step("node image %s: built meanwhile by another process", ref)
		return ref, nil
	}
	p.Step("building node image %s", ref)
	cp, kl := "v"+release.BareVersion(spec.ControlPlane), "v"+release.BareVersion(spec.kubelet())
	// The base image (debootstrap: mostly the network and the disk) is
	// built while the binaries compile (the cores); the first error stops
	// the other.
	g, gctx := errgroup.WithContext(ctx)
	var base *baseImage
	g.Go(func() (err error) {
		base, err = buildBase(gctx, h)
		return err
	})
	var cpBin, kubeletPath string
	var criBins map[string]string
	g.Go(func() (err error) {
		if cpBin, err = gobuild.KubernetesBinaries(gctx, p, cp, gobuild.ControlPlaneCommands...); err != nil {
			return err
		}
		kubeletPath = filepath.Join(cpBin, "kubelet")
		if release.BareVersion(spec.kubelet()) != release.BareVersion(spec.ControlPlane) {
			klBin, err := gobuild.KubernetesBinaries(gctx, p, kl, "kubelet")
			if err != nil {
				return err
			}
			kubeletPath = filepath.Join(klBin, "kubelet")
		}
		switch spec.Runtime.CRIName() {
		case noderuntime.CRIContainerd2:
			criBins, err = containerd2Binaries(gctx, p)
		case noderuntime.CRICRIO:
			criBins, err = crioBinaries(gctx, p)
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return "", err
	}
	work, err := buildDir(cacheDir, ".node-build-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(work) }()

	images, pause, err := componentImages(ctx, h, work, spec, cpBin, base)
	if err != nil {
		return "", err
	}
	archive := filepath.Join(work, "images.tar")
	if err := image.WriteFile(archive, images...); err != nil {
		return "", fmt.Errorf("writing the images of node image %s: %w", ref, err)
	}
	files := nodeFiles(cpBin, kubeletPath, cp, kl, pause, oci)
	switch spec.Runtime.CRIName() {
	case noderuntime.CRIContainerd2:
		files = addContainerd2(files, criBins, pause, oci)
	case noderuntime.CRICRIO:
		var tags []string
		for _, img := range images {
			tags = append(tags, img.Tags...)
		}
		files = addCRIO(files, criBins, pause, oci, archive, tags)
	}
	filesTar, err := files.WriteTo(filepath.Join(work, "files.tar"))
	if err != nil {
		return "", err
	}
	if err := p.Timed("assembling node image "+ref, func() error {
		return assembleNodeImage(ctx, h, base.Ref, ref, filesTar.Path, archive, images, spec.Runtime, oci)
	}); err != nil {
		return "", fmt.Errorf("building node image %s: %w", ref, err)
	}
	return ref, nil
}

// nodeImageRef is the reference of spec's node image on base, with oci its
// OCI runtime, and its key.
func nodeImageRef(base *baseImage, spec Spec, oci ociRuntime) (ref, key string) {
	cp, kl := "v"+release.BareVersion(spec.ControlPlane), "v"+release.BareVersion(spec.kubelet())
	parts := []string{"node", nodeImageRevision, base.Key, cp, kl, containerdConfig("", oci), closedRegistryHosts, defaultStorageManifest, iptablesModeWrapper}
	for _, r := range restrictedRuntimes {
		parts = append(parts, r.binary, r.script(oci.nodePath))
	}
	if !spec.Runtime.IsDefault() {
		parts = append(parts, spec.Runtime.String(), oci.nodePath, oci.digest, productFilesHook)
	}
	switch spec.Runtime.CRIName() {
	case noderuntime.CRIContainerd2:
		parts = append(parts, "cri", noderuntime.CRIContainerd2, containerd2Config("", oci))
		for _, s := range containerd2ProgramSets() {
			parts = append(parts, s.Key())
		}
	case noderuntime.CRICRIO:
		parts = append(parts, crioKeyParts(oci)...)
	}
	if needsCgroupBindsDropIn(kl) {
		// Only then: the keys of the other images stay as they were.
		parts = append(parts, cgroupBindsDropInPath, cgroupBindsDropIn)
	}
	key = cache.ImageKey(parts...)
	return nodeImageRepo + ":" + spec.tag() + "-" + key, key
}

// buildDir makes a work directory of this process in the cache directory
// (beside the entries it fills, for renames), after removing those that
// killed builds left.
func buildDir(cacheDir, prefix string) (string, error) {
	owner.SweepDir(cacheDir, prefix)
	return os.MkdirTemp(cacheDir, prefix+owner.Token()+"-")
}
