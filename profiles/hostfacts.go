package profiles

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/skew"
)

// HostFactsCommand is the agent image's command that prints the facts of
// its host's kernel as JSON (skew.HostFacts: cgroup version, seccomp,
// AppArmor).
var HostFactsCommand = []string{agent.BinaryInImage, "agent", "host-facts"}

// HostFacts asks the agent of each node in c.Namespace for the facts of
// its node's kernel (HostFactsCommand, run in the agent's container through
// the API server's pods/exec): what the oracle asks about a node, read on
// the node itself. Every running agent pod must answer.
func (c *Cluster) HostFacts(ctx context.Context) (map[string]skew.HostFacts, error) {
	pods, err := c.Core.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + agent.AgentName})
	if err != nil {
		return nil, fmt.Errorf("listing the agent's pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Spec.NodeName < pods.Items[j].Spec.NodeName })
	out := map[string]skew.HostFacts{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" {
			continue
		}
		stdout, stderr, err := kubeclient.PodExec(ctx, c.Config, c.Core, c.Namespace, p.Name, "agent", HostFactsCommand...)
		if err != nil {
			return nil, fmt.Errorf("reading the host facts of node %s from its agent (pod %s): %v: %s", p.Spec.NodeName, p.Name, err, strings.TrimSpace(stderr))
		}
		var f skew.HostFacts
		if err := json.Unmarshal([]byte(stdout), &f); err != nil {
			return nil, fmt.Errorf("the host facts of node %s from its agent (pod %s): %w: %q", p.Spec.NodeName, p.Name, err, stdout)
		}
		out[p.Spec.NodeName] = f
	}
	return out, nil
}
