// Package nodeimage builds skewproof's node images offline, as kind's
// pkg/build/nodeimage does for kind's: a Debian base image made with
// debootstrap (baseimage.go), the images kubeadm needs from binaries built
// from the Go module proxy (componentimages.go), the files of the node's
// runtime (nodefiles.go, containerd.go, containerd2.go, crio.go,
// runtimes.go, iptables.go), and the assembly in a container of the base
// image (assemble.go). Every input goes into the image's reference
// (nodeImageRef), so an image is built once and found again.
//
// Package clusters is its one user: Build builds (or finds) the image of a
// Spec, Plan says what bringing a cluster up would build, List, Prune and
// PruneNodes list and remove the images. A Spec's runtime is a
// clusters/noderuntime.Runtime; this package knows where each of the
// runtimes that package names lives in the node (runtime.go).
package nodeimage
