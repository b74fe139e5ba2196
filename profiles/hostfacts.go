package profiles

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

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
		stdout, stderr, err := c.exec(ctx, p.Name, "agent", HostFactsCommand...)
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

// exec runs cmd in a container of a pod of c.Namespace through the API
// server (pods/exec) and returns its standard output and error.
func (c *Cluster) exec(ctx context.Context, pod, container string, cmd ...string) (string, string, error) {
	req := c.Core.CoreV1().RESTClient().Post().Resource("pods").Namespace(c.Namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(c.Config, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), err
}
