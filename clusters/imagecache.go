package clusters

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	senv "github.com/skewproof/skewproof/suites/env"
)

// ListImages describes skewproof's node and base images and its cache.
func ListImages(ctx context.Context) (string, error) {
	out, err := docker(ctx, "images", "--filter", "label=io.skewproof.image", "--format", "{{.Repository}}:{{.Tag}}\t{{.Size}}\t{{.CreatedSince}}")
	if err != nil {
		return "", dockerUnavailableError(err)
	}
	var b strings.Builder
	fmt.Fprintln(&b, "IMAGE\tSIZE\tCREATED")
	if out != "" {
		fmt.Fprintln(&b, out)
	}
	if cache, err := senv.ResolveCacheDir(); err == nil {
		fmt.Fprintf(&b, "cache: %s (%s)\n", cache, dirSize(cache))
	}
	return b.String(), nil
}

func dirSize(dir string) string {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// PruneImages removes skewproof's images from Docker and its build cache.
// Images used by existing clusters are kept by Docker (it refuses).
func PruneImages(ctx context.Context, p *Progress) error {
	out, err := docker(ctx, "images", "--filter", "label=io.skewproof.image", "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		return dockerUnavailableError(err)
	}
	for _, ref := range strings.Fields(out) {
		if _, err := docker(ctx, "rmi", ref); err != nil {
			p.Step("keeping %s: %s", ref, errSummary(err.Error()))
			continue
		}
		p.Step("removed %s", ref)
	}
	cache, err := senv.ResolveCacheDir()
	if err != nil {
		return err
	}
	for _, sub := range []string{"bin", "src"} {
		if err := os.RemoveAll(filepath.Join(cache, sub)); err != nil {
			return err
		}
	}
	for _, pattern := range []string{"base-*", "apparmor-parser-*"} {
		matches, _ := filepath.Glob(filepath.Join(cache, pattern))
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}
	p.Step("removed the build cache under %s", cache)
	return nil
}
