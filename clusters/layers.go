package clusters

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// FileLayer writes, into dir, a layer holding the file src at inImage
// (mode 0755).
func FileLayer(dir, src, inImage string) (ExtraLayer, error) {
	lf, err := newLayer().File(inImage, src, 0o755).WriteTo(filepath.Join(dir, filepath.Base(inImage)+".layer.tar"))
	if err != nil {
		return ExtraLayer{}, fmt.Errorf("writing the layer of %s: %w", inImage, err)
	}
	return ExtraLayer{Path: lf.Path, Digest: lf.DiffID}, nil
}

// HostToolsLayer writes, into dir, a layer holding this host's tools (found
// on PATH, e.g. "sh", "cat", "sleep") at /bin/<name>, with the shared
// libraries and loader ldd names for them: a minimal shell for images that
// must run 'sh -c "cat …"' (Hydrophone reads a conformance image's results
// that way).
func HostToolsLayer(ctx context.Context, dir string, tools ...string) (ExtraLayer, error) {
	l := newLayer()
	for _, t := range tools {
		p, err := exec.LookPath(t)
		if err != nil {
			return ExtraLayer{}, fmt.Errorf("%s is needed for the image: %w", t, err)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return ExtraLayer{}, err
		}
		l.File("/bin/"+t, real, 0o755)
		libs, err := sharedLibraries(ctx, real)
		if err != nil {
			return ExtraLayer{}, err
		}
		for _, lib := range libs {
			if err := l.FromRoot("/", lib); err != nil {
				return ExtraLayer{}, fmt.Errorf("adding library %s: %w", lib, err)
			}
		}
	}
	lf, err := l.WriteTo(filepath.Join(dir, "tools.layer.tar"))
	if err != nil {
		return ExtraLayer{}, err
	}
	return ExtraLayer{Path: lf.Path, Digest: lf.DiffID}, nil
}
