// Pod networking without a CNI add-on: once every node has a podCIDR, a
// ptp + host-local CNI configuration for it on each node and a route to
// each other node's pod CIDR.

package clusters

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

func waitPodCIDRs(ctx context.Context, cs kubernetes.Interface, want int, timeout time.Duration) ([]NodeInfo, error) {
	var (
		infos   []NodeInfo
		listErr error
	)
	// The API is asked with ctx, not the poll's deadline (as in waitReady).
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		infos, listErr = nodeInfos(ctx, cs)
		ok := listErr == nil && len(infos) == want
		for _, n := range infos {
			if n.PodCIDR == "" || n.InternalIP == "" {
				ok = false
			}
		}
		return ok, nil
	})
	switch {
	case err == nil:
		return infos, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	if listErr != nil {
		return nil, fmt.Errorf("nodes without podCIDR after %s: listing nodes: %v", timeout, listErr)
	}
	var missing []string
	for _, n := range infos {
		if n.PodCIDR == "" || n.InternalIP == "" {
			missing = append(missing, n.Name)
		}
	}
	return nil, fmt.Errorf("nodes without podCIDR after %s: %d of %d nodes registered, without a podCIDR or address: %v (is the host overloaded?)", timeout, len(infos), want, missing)
}

// setupNetworking writes a ptp + host-local CNI configuration for the node's
// podCIDR on every node and routes the other nodes' pod CIDRs to them. The
// chain has no portmap plugin: no pod of skewproof's has a hostPort, and
// each plugin is a program started twice per pod (add and delete), which
// an AppArmor node's User-Mode Linux kernel makes slow.
func setupNetworking(kn []nodes.Node, infos []NodeInfo) error {
	byName := map[string]NodeInfo{}
	for _, i := range infos {
		byName[i.Name] = i
	}
	for _, n := range kn {
		me, ok := byName[n.String()]
		if !ok {
			continue
		}
		var script strings.Builder
		script.WriteString(cniScript(me.PodCIDR))
		for _, other := range infos {
			if other.Name != me.Name {
				fmt.Fprintf(&script, "ip route replace %s via %s\n", other.PodCIDR, other.InternalIP)
			}
		}
		var out strings.Builder
		if err := n.Command("sh", "-c", script.String()).SetStdout(&out).SetStderr(&out).Run(); err != nil {
			return fmt.Errorf("configuring pod networking on %s: %v: %s", n.String(), err, out.String())
		}
	}
	return nil
}

// cniScript is a shell script that writes the CNI configuration of a node
// whose pod CIDR is podCIDR (cniConfig), on a kind node and on an AppArmor
// node alike.
func cniScript(podCIDR string) string {
	return "set -e\nmkdir -p /etc/cni/net.d\ncat > /etc/cni/net.d/10-skewproof.conflist.tmp <<'EOF'\n" + cniConfig(podCIDR) +
		"EOF\nmv /etc/cni/net.d/10-skewproof.conflist.tmp /etc/cni/net.d/10-skewproof.conflist\n"
}

func cniConfig(podCIDR string) string {
	return `{
  "cniVersion": "0.4.0",
  "name": "skewproof",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "ranges": [[{"subnet": "` + podCIDR + `"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`
}
