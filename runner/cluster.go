package runner

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/reports"
)

// cluster is the cluster under test as the API server describes it.
type cluster struct {
	cs        kubernetes.Interface
	apiserver string
	nodes     []corev1.Node
}

func connect(ctx context.Context, kubeconfig string) (*cluster, error) {
	cl, err := kubeclient.Load(kubeconfig)
	if err != nil {
		return nil, err
	}
	cs := cl.Core
	sv, err := cs.Discovery().ServerVersion()
	if err := kubeclient.Unreachable(kubeconfig, err); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("asking the API server of %s its version: %w", kubeconfig, kubeclient.WithRemedy(err, grantRun))
	}
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of %s: %w", kubeconfig, kubeclient.WithRemedy(err, grantRun))
	}
	sort.Slice(nl.Items, func(i, j int) bool { return nl.Items[i].Name < nl.Items[j].Name })
	return &cluster{cs: cs, apiserver: sv.GitVersion, nodes: nl.Items}, nil
}

func (c *cluster) names() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.Name)
	}
	return out
}

// records describes the nodes for run.json; appArmor is the node agent's
// report of whether AppArmor profiles load on each node.
func (c *cluster) records(appArmor map[string]bool, access map[string]nodeaccess.Access) []reports.NodeRecord {
	var out []reports.NodeRecord
	for i := range c.nodes {
		n := &c.nodes[i]
		r := reports.NodeRecord{Name: n.Name, ControlPlane: nodefacts.IsControlPlane(n), Kubelet: n.Status.NodeInfo.KubeletVersion,
			ContainerRuntime: n.Status.NodeInfo.ContainerRuntimeVersion, KernelVersion: n.Status.NodeInfo.KernelVersion,
			OSImage: n.Status.NodeInfo.OSImage, Architecture: n.Status.NodeInfo.Architecture}
		if on, ok := appArmor[n.Name]; ok {
			r.AppArmor = &on
		}
		r.OCIRuntime = strings.TrimSpace(n.Labels[nodefacts.OCIRuntimeLabel] + " " + n.Labels[nodefacts.OCIRuntimeVersionLabel])
		r.Access = string(nodeaccess.None)
		if a, ok := access[n.Name]; ok {
			r.Access = string(a)
		}
		out = append(out, r)
	}
	return out
}

func kernelRelease() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

// allLocal reports whether commands can run on every node from this host
// (kind node containers and User-Mode Linux nodes), as prov's Docker sees it.
func allLocal(ctx context.Context, prov *clusters.Provider, nodes []string) bool {
	for _, n := range nodes {
		if !prov.IsLocalNode(ctx, n) {
			return false
		}
	}
	return len(nodes) > 0
}

// grantRun is how to grant a run the permissions it lacks.
const grantRun = "grant the run its permissions: skewproof rbac | kubectl apply -f - (docs/rbac.md)"
