package clusters

import (
	"fmt"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
	"github.com/skewproof/skewproof/skew"
)

// NodeRuntime is the container runtime of a worker: the CRI runtime its
// kubelet talks to and the OCI runtime that one runs containers with. The
// zero value is the default: Debian's containerd 1.7 with runc.
type NodeRuntime = nodeimage.Runtime

// Worker is one worker of a new cluster: its kubelet version and runtime.
type Worker struct {
	Kubelet string
	Runtime NodeRuntime
}

// String is the worker in the --kubelets grammar: "1.37.2", "1.37.2+crun",
// "1.37.2@containerd+runc".
func (w Worker) String() string {
	s := skew.BareVersion(w.Kubelet)
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

// ParseNodeRuntime reads a runtime, CRI[+OCI] or +OCI ("containerd2+crun",
// "+crun", "containerd", "crio+crun"; "cri-o" is "crio"); "" and "default"
// are the default runtime.
func ParseNodeRuntime(s string, vendor map[string]string) (NodeRuntime, error) {
	return nodeimage.ParseRuntime(s, vendor)
}

// ParseOCIRuntime reads NAME=PATH (--oci-runtime): an OCI runtime binary on
// this host, to be put into the node images of the workers that name it.
func ParseOCIRuntime(s string) (name, path string, err error) {
	return nodeimage.ParseOCIRuntime(s)
}
