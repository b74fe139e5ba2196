package clusters

import (
	"context"
	"errors"
	"fmt"
	"github.com/skewproof/skewproof/clusters/internal/command"
	"os"
	"strings"
	"sync"

	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
)

// loadImageArchive imports the image ref from a "docker save" archive
// (image.WriteBinary writes one), pinned, into the containerd of each named
// node (a kind node container or a UML node, through nodeExec). Nothing is
// pulled or pushed.
func loadImageArchive(ctx context.Context, h command.Host, archive, ref string, nodes []string) error {
	// Into every node at once: each import is a docker exec of ctr reading
	// the archive, mostly waiting on the node's containerd and disk; one
	// after the other they took 32 s for five nodes on a busy machine.
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = importImage(ctx, h, n, archive, ref)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// importImage imports the archive into a node's containerd (the k8s.io
// namespace the kubelet's CRI uses) and pins ref so that the kubelet's
// image garbage collection keeps it.
func importImage(ctx context.Context, h command.Host, node, archive, ref string) error {
	af, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer func() { _ = af.Close() }()
	if _, err := nodeExec(ctx, h, node, nil, "test", "-x", nodeimage.CRIOBinary); err == nil {
		// A CRI-O node (internal/nodeimage/crio.go): into containers-storage, which pins
		// every image (pinned_images).
		if _, err := nodeExec(ctx, h, node, af, "sh", "-c", crioImportScript, "sh", ref); err != nil {
			return fmt.Errorf("loading %s into node %s: %w", ref, node, err)
		}
		return nil
	}
	_, err = nodeExec(ctx, h, node, af, "ctr", "-n", "k8s.io", "images", "import", "--no-unpack", "--digests", "-")
	if err != nil {
		return fmt.Errorf("loading %s into node %s: %w", ref, node, err)
	}
	if _, err := nodeExec(ctx, h, node, nil, "ctr", "-n", "k8s.io", "images", "label", fullImageName(ref), "io.cri-containerd.pinned=pinned"); err != nil {
		return fmt.Errorf("pinning %s on node %s: %w", ref, node, err)
	}
	return nil
}

// crioImportScript copies the "docker save" archive on its standard input
// into a CRI-O node's containers-storage as $1.
const crioImportScript = `set -e
f=$(mktemp /var/tmp/skewproof-image-XXXXXX)
trap 'rm -f "$f"' EXIT
cat > "$f"
skopeo copy --quiet "docker-archive:$f" "containers-storage:$1"`

// fullImageName is the name containerd stores a reference under on import:
// a name without a registry gets "docker.io/", and a one-part name also
// "library/" ("sonobuoy/sonobuoy:v1" → "docker.io/sonobuoy/sonobuoy:v1").
func fullImageName(ref string) string {
	first, _, found := strings.Cut(ref, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return ref
	}
	if !found {
		return "docker.io/library/" + ref
	}
	return "docker.io/" + ref
}
