package clusters

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
	"github.com/skewproof/skewproof/skew/release"
)

// NodeRuntime is the container runtime of a worker: the CRI runtime its
// kubelet talks to and the OCI runtime that one runs containers with. The
// zero value is the default: Debian's containerd 1.7 with runc. It is
// nodeimage.Runtime, which builds the node image's runtime files, under the
// name the commands and the runner can import (clusters/internal/nodeimage
// is internal to clusters).
type NodeRuntime = nodeimage.Runtime

// Worker is one worker of a new cluster: its kubelet version and runtime.
type Worker struct {
	Kubelet string
	Runtime NodeRuntime
}

// String is the worker in the --kubelets grammar: "1.37.2", "1.37.2+crun",
// "1.37.2@containerd+runc".
func (w Worker) String() string {
	s := release.BareVersion(w.Kubelet)
	if w.Runtime.CRI != "" && w.Runtime.CRI != nodeimage.CRIContainerd {
		s += "@" + w.Runtime.CRI
	}
	if w.Runtime.OCI != "" && w.Runtime.OCI != nodeimage.OCIRunc {
		s += "+" + w.Runtime.OCI
	}
	return s
}

// ParseWorker reads one entry of --kubelets: VERSION[@CRI][+OCI], e.g.
// 1.37.2, 1.37.2+crun, 1.37.2@containerd+myruntime. vendor names the OCI
// runtimes the user provides (OCIRuntime) besides the node images' own.
func ParseWorker(s string, vendor map[string]string) (Worker, error) {
	kl, rt := s, ""
	if i := strings.IndexAny(s, "@+"); i >= 0 {
		kl, rt = s[:i], strings.TrimPrefix(s[i:], "@")
	}
	w := Worker{Kubelet: kl}
	if kl == "" {
		return w, fmt.Errorf("%q: no kubelet version (the form is VERSION[@CRI][+OCI], e.g. 1.37.2+crun)", s)
	}
	r, err := ParseNodeRuntime(rt, vendor)
	if err != nil {
		return w, fmt.Errorf("%q: %v", s, err)
	}
	w.Runtime = r
	return w, nil
}

// ociName is what a user-provided OCI runtime may be called: a node label
// value and a containerd runtime handler name.
var ociName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$`)

// ParseNodeRuntime reads a runtime, CRI[+OCI] or +OCI ("containerd2+crun",
// "+crun", "containerd", "crio+crun"; "cri-o" is "crio"); "" and "default"
// are the default runtime. The CRI runtime is one a node image can have,
// the OCI runtime one every node image carries or one of vendor.
func ParseNodeRuntime(s string, vendor map[string]string) (NodeRuntime, error) {
	var r NodeRuntime
	if s == "default" {
		return r, nil
	}
	cri, oci, hasOCI := strings.Cut(s, "+")
	if cri == "cri-o" {
		// The name CRI-O gives itself (the kubelet's node status, and
		// simulate --runtime).
		cri = nodeimage.CRICRIO
	}
	if cri != "" {
		if known := nodeimage.CRIRuntimes(); !slices.Contains(known, cri) {
			return r, fmt.Errorf("unknown CRI runtime %q (known: %s)", cri, strings.Join(known, ", "))
		}
		r.CRI = cri
	}
	if hasOCI {
		own := nodeimage.NodeOCIRuntimes()
		if _, theirs := vendor[oci]; !slices.Contains(own, oci) && !theirs {
			known := append(own, slices.Sorted(maps.Keys(vendor))...)
			return r, fmt.Errorf("unknown OCI runtime %q (known: %s; give your own with --oci-runtime NAME=PATH)", oci, strings.Join(known, ", "))
		}
		r.OCI = oci
	}
	return r, nil
}

// ParseOCIRuntime reads NAME=PATH (--oci-runtime): an OCI runtime binary on
// this host, to be put into the node images of the workers that name it.
// NAME is a valid node label value and handler name, not that of a runtime
// the node images carry; PATH is an executable file, returned absolute.
func ParseOCIRuntime(s string) (name, path string, err error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return "", "", fmt.Errorf("%q: the form is NAME=PATH, e.g. myruntime=/usr/local/bin/myruntime", s)
	}
	if !ociName.MatchString(name) {
		return "", "", fmt.Errorf("%q: the name must be 1-32 lower-case letters, digits or '-', starting and ending with a letter or digit", s)
	}
	if slices.Contains(nodeimage.NodeOCIRuntimes(), name) {
		return "", "", fmt.Errorf("%q: %s is the name of a runtime the node images carry; choose another name", s, name)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("%q: %v", s, err)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "", "", fmt.Errorf("%q: %s is not an executable file", s, path)
	}
	abs, err := filepath.Abs(path)
	return name, abs, err
}
