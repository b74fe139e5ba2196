package nodeimage

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/clusters/noderuntime"
)

// nodeOCIRuntimes are the OCI runtimes every node image carries
// (noderuntime.OCIRuntimes), with their path in the node.
var nodeOCIRuntimes = map[string]string{noderuntime.OCIRunc: nodeRunc, noderuntime.OCICrun: "/usr/bin/crun"}

// ociRuntime is the OCI runtime of a node image: its name, its path in the
// node, and, for one the user provides, the file on this host and its
// digest (part of the image's key).
type ociRuntime struct {
	name, nodePath, hostPath, digest string
}

// vendorOCIDir is where a user-provided OCI runtime is put in the node.
const vendorOCIDir = "/usr/local/sbin/skewproof-oci"

// resolveOCI finds the OCI runtime of r: one of the node images' own, or
// one of vendor (name → path on this host), whose file is hashed.
func resolveOCI(r noderuntime.Runtime, vendor map[string]string) (ociRuntime, error) {
	name := r.OCIName()
	if p, ok := nodeOCIRuntimes[name]; ok {
		return ociRuntime{name: name, nodePath: p}, nil
	}
	host, ok := vendor[name]
	if !ok {
		return ociRuntime{}, fmt.Errorf("OCI runtime %s: not one of the node images' (%s) and not given with --oci-runtime", name, strings.Join(slices.Sorted(maps.Keys(nodeOCIRuntimes)), ", "))
	}
	f, err := os.Open(host)
	if err != nil {
		return ociRuntime{}, fmt.Errorf("OCI runtime %s: %w", name, err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ociRuntime{}, fmt.Errorf("OCI runtime %s: reading %s: %w", name, host, err)
	}
	return ociRuntime{name: name, nodePath: vendorOCIDir + "/" + name, hostPath: host, digest: hex.EncodeToString(h.Sum(nil))}, nil
}

// productFilesHook replaces kind's createContainer hook
// (/kind/bin/mount-product-files.sh, which gives every container its own
// copy of the node's product_name and product_uuid) on nodes whose OCI
// runtime is not runc. kind's copies the files into the container's root
// file system; crun makes a read-only root file system read-only before it
// runs createContainer hooks (crun 1.21 libcrun/linux.c libcrun_set_mounts:
// the remount is applied by finalize_mounts; libcrun/container.c runs the
// hooks after libcrun_set_mounts), where runc runs them before (runc
// libcontainer/rootfs_linux.go prepareRootfs, finalizeRootfs afterwards), so
// every container with readOnlyRootFilesystem failed to start there. This
// one copies the files into the bundle directory and bind-mounts them from
// there.
const productFilesHook = `#!/bin/bash
# written by skewproof: kind's createContainer hook for OCI runtimes other than runc
# (copies the product files beside the root file system, not into it, which may be read-only)
set -o errexit -o nounset -o pipefail
export PATH='/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
bundle=$(jq -r .bundle)
cp /kind/product_* "${bundle:?}/"
for m in /sys/class/dmi/id/product_name:product_name /sys/class/dmi/id/product_uuid:product_uuid /sys/devices/virtual/dmi/id/product_uuid:product_uuid; do
	path=${m%%:*}
	if [[ -f $path ]]; then
		mount -o ro,bind "$bundle/${m##*:}" "$bundle/rootfs$path"
	fi
done
`

// productFilesHookPath is where kind's hook is (cri-base.json names it).
const productFilesHookPath = "/kind/bin/mount-product-files.sh"
