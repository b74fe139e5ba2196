package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/internal/cachedir"
)

// List describes skewproof's node and base images and its cache.
func List(ctx context.Context, h command.Host) (string, error) {
	out, err := h.Docker(ctx, "images", "--filter", "label=io.skewproof.image", "--format", "{{.Repository}}:{{.Tag}}\t{{.Size}}\t{{.CreatedSince}}")
	if err != nil {
		return "", command.DockerUnavailableError(err)
	}
	var b strings.Builder
	fmt.Fprintln(&b, "IMAGE\tSIZE\tCREATED")
	if out != "" {
		fmt.Fprintln(&b, out)
	}
	if cache, err := cachedir.Resolve(); err == nil {
		fmt.Fprintf(&b, "cache: %s (%s)\n", cache, dirSize(cache))
	}
	return b.String(), nil
}

func dirSize(dir string) string {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// Prune removes skewproof's images from Docker and its build cache.
// Images used by existing clusters are kept by Docker (it refuses).
func Prune(ctx context.Context, h command.Host) error {
	p := h.Progress
	out, err := h.Docker(ctx, "images", "--filter", "label=io.skewproof.image", "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		return command.DockerUnavailableError(err)
	}
	for _, ref := range strings.Fields(out) {
		if _, err := h.Docker(ctx, "rmi", ref); err != nil {
			p.Step("keeping %s: %s", ref, command.ErrSummary(err.Error()))
			continue
		}
		p.Step("removed %s", ref)
	}
	cache, err := cachedir.Resolve()
	if err != nil {
		return err
	}
	var found []string
	for _, pattern := range []string{"bin", "src", "base-*", "apparmor-parser-*"} {
		matches, _ := filepath.Glob(filepath.Join(cache, pattern))
		found = append(found, matches...)
	}
	for _, m := range found {
		if err := os.RemoveAll(m); err != nil {
			return err
		}
	}
	if len(found) == 0 {
		p.Step("no build cache under %s: nothing to remove", cache)
		return nil
	}
	p.Step("removed the build cache under %s (%d entries)", cache, len(found))
	return nil
}

// PruneNodes keeps the newest keep node images (by creation time) and
// removes the others (pruneNodeImages).
func PruneNodes(ctx context.Context, h command.Host, keep int) error {
	return pruneNodeImages(ctx, h, nodeImageRepo, keep)
}

// pruneNodeImages keeps the newest keep images of repository (by creation
// time) and removes the others; the build cache stays, so a removed image
// is reassembled from cached binaries when needed again. Images in use by
// a cluster are kept by Docker (it refuses), and said so.
func pruneNodeImages(ctx context.Context, h command.Host, repository string, keep int) error {
	p := h.Progress
	if keep < 0 {
		return fmt.Errorf("--keep must be 0 or more")
	}
	out, err := h.Docker(ctx, "images", repository, "--format", "{{.ID}} {{.Repository}}:{{.Tag}}")
	if err != nil {
		return command.DockerUnavailableError(err)
	}
	type image struct{ ref, created string }
	var imgs []image
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		id, ref, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		created, err := h.Docker(ctx, "image", "inspect", "-f", "{{.Created}}", id)
		if err != nil {
			return fmt.Errorf("inspecting %s: %w", ref, err)
		}
		imgs = append(imgs, image{ref, strings.TrimSpace(created)})
	}
	// RFC 3339 in UTC sorts as text; newest first.
	sort.SliceStable(imgs, func(i, j int) bool { return imgs[i].created > imgs[j].created })
	var remove []string
	for i, im := range imgs {
		if i < keep {
			p.Step("keeping %s (created %s)", im.ref, im.created)
			continue
		}
		remove = append(remove, im.ref)
	}
	return Remove(ctx, h, remove)
}

// Remove removes node images; one a cluster uses is kept by Docker (it
// refuses), and said so. The build cache stays.
func Remove(ctx context.Context, h command.Host, refs []string) error {
	for _, ref := range refs {
		if _, err := h.Docker(ctx, "rmi", ref); err != nil {
			h.Progress.Step("keeping %s: %s", ref, command.ErrSummary(err.Error()))
			continue
		}
		h.Progress.Step("removed %s", ref)
	}
	return nil
}
