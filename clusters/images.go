package clusters

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

	senv "github.com/skewproof/skewproof/suites/env"
)

//go:embed assets/pause.go.txt
var pauseSource []byte

// ImageRef is a parsed image reference registry/repository:tag.
type ImageRef struct {
	Full string // registry.k8s.io/etcd:3.7.0-0
	Name string // last path element: etcd
	Tag  string // 3.7.0-0
}

func parseImageRef(s string) ImageRef {
	s = strings.TrimSpace(s)
	name, tag := s, "latest"
	if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		name, tag = s[:i], s[i+1:]
	}
	return ImageRef{Full: s, Name: name[strings.LastIndex(name, "/")+1:], Tag: tag}
}

// kubeadmImages asks kubeadm which images a cluster of its version needs.
func kubeadmImages(ctx context.Context, kubeadm, version string) ([]ImageRef, error) {
	out, err := exec.CommandContext(ctx, kubeadm, "config", "images", "list", "--kubernetes-version", "v"+trimV(version)).Output()
	if err != nil {
		return nil, fmt.Errorf("kubeadm config images list: %w", err)
	}
	var refs []ImageRef
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
	dir, err := moduleDir(ctx, "k8s.io/kubernetes", "v"+trimV(v))
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

// BusyBoxImage is the name under which the busybox test image is also
// preloaded, independent of the e2e framework's naming.
const BusyBoxImage = "skewproof.local/busybox:1"

// etcdBinary builds etcd for a kubeadm etcd image tag such as 3.7.0-0.
func etcdBinary(ctx context.Context, p *Progress, tag string) (string, error) {
	v := "v" + strings.SplitN(tag, "-", 2)[0]
	return buildGoPrograms(ctx, p, goProgramSet{
		Module:   "go.etcd.io/etcd/server/v3",
		Version:  v,
		Programs: map[string]string{"etcd": "go.etcd.io/etcd/server/v3"},
		LDFlags:  "-s -w",
	})
}

// corednsBinary builds CoreDNS at the tag kubeadm names.
func corednsBinary(ctx context.Context, p *Progress, tag string) (string, error) {
	return buildGoPrograms(ctx, p, goProgramSet{
		Module:   "github.com/coredns/coredns",
		Version:  "v" + trimV(tag),
		Programs: map[string]string{"coredns": "github.com/coredns/coredns"},
		LDFlags:  "-s -w",
	})
}

// pauseBinary builds the project's own pause program.
func pauseBinary(ctx context.Context, p *Progress) (string, error) {
	cache, err := senv.ResolveCacheDir()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cache, "bin", "pause-"+cacheKey("pause", string(pauseSource)))
	err = atomicDir(dst, func(tmp string) error {
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
		if err := runIn(ctx, src, goEnv(), "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(tmp, "pause"), "."); err != nil {
			return err
		}
		return os.RemoveAll(src)
	})
	return dst, err
}

// binaryImage is an image holding one static binary.
func binaryImage(dir, ref, bin, inImage string, entrypoint []string, extra ...layerFile) (imageSpec, error) {
	lf, err := newLayer().File(inImage, filepath.Join(bin), 0o755).Dir("/tmp", 0o1777).
		Data("/etc/passwd", []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"), 0o644).
		Data("/etc/nsswitch.conf", []byte("hosts: files dns\n"), 0o644).
		WriteTo(filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar"))
	if err != nil {
		return imageSpec{}, err
	}
	return imageSpec{
		Tags:       []string{ref},
		Layers:     append(append([]layerFile{}, extra...), lf),
		Entrypoint: entrypoint,
		Labels:     map[string]string{"io.skewproof.image": "component"},
	}, nil
}
