package nodeimage

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/gobuild"
	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/internal/image"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/skew/release"
)

//go:embed assets/pause.go.txt
var pauseSource []byte

// imageRef is a parsed image reference registry/repository:tag.
type imageRef struct {
	Full string // registry.k8s.io/etcd:3.7.0-0
	Name string // last path element: etcd
	Tag  string // 3.7.0-0
}

func parseImageRef(s string) imageRef {
	s = strings.TrimSpace(s)
	name, tag := s, "latest"
	if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		name, tag = s[:i], s[i+1:]
	}
	return imageRef{Full: s, Name: name[strings.LastIndex(name, "/")+1:], Tag: tag}
}

// kubeadmImages asks kubeadm which images a cluster of its version needs.
func kubeadmImages(ctx context.Context, kubeadm, version string) ([]imageRef, error) {
	out, err := exec.CommandContext(ctx, kubeadm, "config", "images", "list", "--kubernetes-version", "v"+release.BareVersion(version)).Output()
	if err != nil {
		return nil, fmt.Errorf("kubeadm config images list: %w", err)
	}
	var refs []imageRef
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			refs = append(refs, parseImageRef(l))
		}
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("kubeadm %s listed no images", version)
	}
	return refs, nil
}

var busyboxTagRe = regexp.MustCompile(`configs\[BusyBox\]\s*=\s*Config\{[^,]+,\s*"busybox",\s*"([^"]+)"\}`)

// e2eBusyBoxRef is the busybox image name the e2e framework of version v asks
// for (test/utils/image/manifest.go).
func e2eBusyBoxRef(ctx context.Context, v string) (string, error) {
	dir, err := gobuild.ModuleDir(ctx, "k8s.io/kubernetes", "v"+release.BareVersion(v))
	if err != nil {
		return "", err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "test", "utils", "image", "manifest.go"))
	if err != nil {
		return "", err
	}
	m := busyboxTagRe.FindSubmatch(raw)
	if m == nil {
		return "", fmt.Errorf("busybox tag not found in test/utils/image/manifest.go of %s", v)
	}
	return "registry.k8s.io/e2e-test-images/busybox:" + string(m[1]), nil
}

// etcdBinary builds etcd for a kubeadm etcd image tag such as 3.7.0-0.
func etcdBinary(ctx context.Context, p *progress.Progress, tag string) (string, error) {
	return gobuild.Build(ctx, p, etcdProgramSet(tag))
}

// etcdProgramSet is the build of etcd for a kubeadm etcd image tag: the
// module go.etcd.io/etcd/server/v3 at the tag's release from etcd 3.5 on,
// and for an etcd 3.4 release (kubeadm v1.19-v1.21 ask for 3.4.13) the
// module go.etcd.io/etcd at the version etcd34Versions names.
func etcdProgramSet(tag string) gobuild.ProgramSet {
	v := "v" + strings.SplitN(tag, "-", 2)[0]
	if mv, ok := etcd34Versions[v]; ok {
		return gobuild.ProgramSet{
			Module:   "go.etcd.io/etcd",
			Version:  mv,
			Programs: map[string]string{"etcd": "go.etcd.io/etcd"},
			LDFlags:  "-s -w",
		}
	}
	return gobuild.ProgramSet{
		Module:   "go.etcd.io/etcd/server/v3",
		Version:  v,
		Programs: map[string]string{"etcd": "go.etcd.io/etcd/server/v3"},
		LDFlags:  "-s -w",
	}
}

// etcd34Versions maps an etcd 3.4 release to the version of the module
// go.etcd.io/etcd that the build takes for it. etcd 3.4's server is the
// module go.etcd.io/etcd (main package at its root), whose go.mod has no
// /v3 suffix, so its v3.4.x tags are no valid versions of it: the Go
// module proxy refuses go.etcd.io/etcd@v3.4.13 (403) and serves the 3.4
// branch as pseudo-versions only. v3.4.13 is taken at the pseudo-version
// Kubernetes v1.20 and v1.21 themselves require (their go.mod names it
// v3.4.13), commit dd1b699fc489 of etcd's release-3.4 branch, whose
// version.Version is "3.4.13".
var etcd34Versions = map[string]string{
	"v3.4.13": "v0.5.0-alpha.5.0.20200910180754-dd1b699fc489",
}

// pauseBinary builds the project's own pause program.
func pauseBinary(ctx context.Context, p *progress.Progress) (string, error) {
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cacheDir, "bin", "pause-"+cache.Key("pause", string(pauseSource)))
	err = cache.AtomicDir(ctx, dst, p.Step, func(tmp string) error {
		src := filepath.Join(tmp, "src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module skewproof.local/pause\n\ngo 1.21\n"), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, "main.go"), pauseSource, 0o644); err != nil {
			return err
		}
		if err := command.Run(ctx, src, gobuild.Env(), "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(tmp, "pause"), "."); err != nil {
			return err
		}
		return os.RemoveAll(src)
	})
	return dst, err
}

// componentImages builds the images kubeadm of the control-plane version
// asks for (the control-plane components only for a control-plane image)
// and the busybox test image, from the binaries in cpBin and the layers of
// the base image; pause is the sandbox image's reference.
func componentImages(ctx context.Context, h command.Host, work string, spec Spec, cpBin string, base *baseImage) (images []image.Image, pause string, err error) {
	cp := "v" + release.BareVersion(spec.ControlPlane)
	refs, err := kubeadmImages(ctx, filepath.Join(cpBin, "kubeadm"), cp)
	if err != nil {
		return nil, "", err
	}
	for _, r := range refs {
		var img image.Image
		switch r.Name {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler":
			if !spec.isControlPlane() {
				continue
			}
			img, err = image.Binary(work, r.Full, filepath.Join(cpBin, r.Name), "/usr/local/bin/"+r.Name, nil)
		case "kube-proxy":
			var wrapper image.Layer
			if wrapper, err = iptablesWrapperLayer(filepath.Join(work, "iptables-wrapper.tar")); err == nil {
				img, err = image.Binary(work, r.Full, filepath.Join(cpBin, r.Name), "/usr/local/bin/"+r.Name, nil, base.ToolsLayer, wrapper)
			}
		case "etcd":
			if !spec.isControlPlane() {
				continue
			}
			var dir string
			if dir, err = etcdBinary(ctx, h.Progress, r.Tag); err == nil {
				img, err = image.Binary(work, r.Full, filepath.Join(dir, "etcd"), "/usr/local/bin/etcd", nil)
			}
		case "coredns":
			// Not built: the clusters skip kubeadm's CoreDNS add-on
			// (noCoreDNSPatch).
			continue
		case "pause":
			var dir string
			pause = r.Full
			if dir, err = pauseBinary(ctx, h.Progress); err == nil {
				img, err = image.Binary(work, r.Full, filepath.Join(dir, "pause"), "/pause", []string{"/pause"})
			}
		default:
			return nil, "", fmt.Errorf("kubeadm %s asks for image %s, which skewproof cannot build", spec.ControlPlane, r.Full)
		}
		if err != nil {
			return nil, "", fmt.Errorf("building image %s: %w", r.Full, err)
		}
		images = append(images, img)
	}
	if pause == "" {
		return nil, "", fmt.Errorf("kubeadm %s listed no pause image", cp)
	}
	bbRef, err := e2eBusyBoxRef(ctx, cp)
	if err != nil {
		return nil, "", err
	}
	images = append(images, image.Image{Tags: []string{bbRef, nodefacts.BusyBoxImage}, Layers: []image.Layer{base.BusyBox}, Cmd: []string{"sh"},
		Labels: map[string]string{"io.skewproof.image": "test"}})
	return images, pause, nil
}
