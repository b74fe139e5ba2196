// Package noderuntime is the container runtime of a worker and the
// --kubelets grammar that names it: VERSION[@CRI][+OCI], e.g. 1.37.2,
// 1.37.2+crun, 1.37.2@crio+crun, 1.37.2+myruntime with --oci-runtime
// myruntime=PATH. It only reads and names; clusters' node-image builder
// (clusters/internal/nodeimage) turns a Runtime into the files of an image.
package noderuntime

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/skew/release"
)

// The CRI runtimes a node image can have, and the OCI runtimes every node
// image carries.
const (
	// CRIContainerd is Debian trixie's containerd 1.7, the default.
	CRIContainerd = "containerd"
	// CRIContainerd2 is containerd 2.x built from the Go module proxy.
	CRIContainerd2 = "containerd2"
	// CRICRIO is CRI-O built from the Go module proxy.
	CRICRIO = "crio"
	// OCIRunc is Debian trixie's runc, the default.
	OCIRunc = "runc"
	// OCICrun is Debian trixie's crun.
	OCICrun = "crun"
)

// CRIRuntimes are the CRI runtimes a node image can have.
func CRIRuntimes() []string { return []string{CRIContainerd, CRIContainerd2, CRICRIO} }

// OCIRuntimes are the OCI runtimes every node image carries, sorted.
func OCIRuntimes() []string { return []string{OCICrun, OCIRunc} }

// Runtime is the container runtime of a worker: the CRI runtime its
// kubelet talks to and the OCI runtime that one runs containers with. The
// zero value is the default: containerd 1.7 with runc.
type Runtime struct {
	// CRI is one of CRIRuntimes; "" is CRIContainerd.
	CRI string `json:"cri,omitempty"`
	// OCI is one of OCIRuntimes or the name of a runtime the user provides
	// (ParseVendorOCI); "" is OCIRunc.
	OCI string `json:"oci,omitempty"`
}

// CRIName is r's CRI runtime, the default's name for "".
func (r Runtime) CRIName() string {
	if r.CRI == "" {
		return CRIContainerd
	}
	return r.CRI
}

// OCIName is r's OCI runtime, the default's name for "".
func (r Runtime) OCIName() string {
	if r.OCI == "" {
		return OCIRunc
	}
	return r.OCI
}

// IsDefault says whether r is the default runtime.
func (r Runtime) IsDefault() bool { return r.CRIName() == CRIContainerd && r.OCIName() == OCIRunc }

// String is r in the grammar's suffix form: "containerd+crun".
func (r Runtime) String() string { return r.CRIName() + "+" + r.OCIName() }

// Worker is one worker of a new cluster: its kubelet version and runtime.
type Worker struct {
	Kubelet string
	Runtime Runtime
}

// String is the worker in the --kubelets grammar: "1.37.2", "1.37.2+crun",
// "1.37.2@containerd2+runc".
func (w Worker) String() string {
	s := release.BareVersion(w.Kubelet)
	if w.Runtime.CRI != "" && w.Runtime.CRI != CRIContainerd {
		s += "@" + w.Runtime.CRI
	}
	if w.Runtime.OCI != "" && w.Runtime.OCI != OCIRunc {
		s += "+" + w.Runtime.OCI
	}
	return s
}

// ParseWorker reads one entry of --kubelets: VERSION[@CRI][+OCI], e.g.
// 1.37.2, 1.37.2+crun, 1.37.2@containerd+myruntime. vendor names the OCI
// runtimes the user provides (ParseVendorOCI) besides the node images' own.
func ParseWorker(s string, vendor map[string]string) (Worker, error) {
	kl, rt := s, ""
	if i := strings.IndexAny(s, "@+"); i >= 0 {
		kl, rt = s[:i], strings.TrimPrefix(s[i:], "@")
	}
	w := Worker{Kubelet: kl}
	if kl == "" {
		return w, fmt.Errorf("%q: no kubelet version (the form is VERSION[@CRI][+OCI], e.g. 1.37.2+crun)", s)
	}
	r, err := Parse(rt, vendor)
	if err != nil {
		return w, fmt.Errorf("%q: %v", s, err)
	}
	w.Runtime = r
	return w, nil
}

// Parse reads a runtime, CRI[+OCI] or +OCI ("containerd2+crun", "+crun",
// "containerd", "crio+crun"; "cri-o" is "crio"); "" and "default" are the
// default runtime. The CRI runtime is one a node image can have, the OCI
// runtime one every node image carries or one of vendor.
func Parse(s string, vendor map[string]string) (Runtime, error) {
	var r Runtime
	if s == "default" {
		return r, nil
	}
	cri, oci, hasOCI := strings.Cut(s, "+")
	if cri == "cri-o" {
		// The name CRI-O gives itself (the kubelet's node status, and
		// simulate --runtime).
		cri = CRICRIO
	}
	if cri != "" {
		if known := CRIRuntimes(); !slices.Contains(known, cri) {
			return r, fmt.Errorf("unknown CRI runtime %q (known: %s)", cri, strings.Join(known, ", "))
		}
		r.CRI = cri
	}
	if hasOCI {
		own := OCIRuntimes()
		if _, theirs := vendor[oci]; !slices.Contains(own, oci) && !theirs {
			known := append(own, slices.Sorted(maps.Keys(vendor))...)
			return r, fmt.Errorf("unknown OCI runtime %q (known: %s; give your own with --oci-runtime NAME=PATH)", oci, strings.Join(known, ", "))
		}
		r.OCI = oci
	}
	return r, nil
}

// ociName is what a user-provided OCI runtime may be called: a node label
// value and a containerd runtime handler name.
var ociName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$`)

// ParseVendorOCI reads NAME=PATH (--oci-runtime): an OCI runtime binary on
// this host, to be put into the node images of the workers that name it.
// NAME is a valid node label value and handler name, not that of a runtime
// the node images carry; PATH is an executable file, returned absolute.
func ParseVendorOCI(s string) (name, path string, err error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return "", "", fmt.Errorf("%q: the form is NAME=PATH, e.g. myruntime=/usr/local/bin/myruntime", s)
	}
	if !ociName.MatchString(name) {
		return "", "", fmt.Errorf("%q: the name must be 1-32 lower-case letters, digits or '-', starting and ending with a letter or digit", s)
	}
	if slices.Contains(OCIRuntimes(), name) {
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
