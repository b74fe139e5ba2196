// Readiness: the nodes as the API reports them, and the wait until every
// node is Ready and every kube-system pod is ready.

package clusters

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/podready"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

func nodeInfos(ctx context.Context, cs kubernetes.Interface) ([]NodeInfo, error) {
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []NodeInfo
	for _, n := range nl.Items {
		ni := NodeInfo{Name: n.Name, Role: "worker", KubeletVersion: n.Status.NodeInfo.KubeletVersion, PodCIDR: n.Spec.PodCIDR}
		if nodefacts.IsControlPlane(&n) {
			ni.Role = "control-plane"
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !strings.Contains(a.Address, ":") {
				ni.InternalIP = a.Address
			}
		}
		out = append(out, ni)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// waitReady waits until want nodes are Ready and every kube-system pod is
// ready (or has succeeded).
func waitReady(ctx context.Context, cs kubernetes.Interface, want int, timeout time.Duration) error {
	var problem string
	// The API is asked with ctx, not the poll's deadline, so that the last
	// look reports the cluster's state rather than the deadline.
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		problem = readiness(ctx, cs, want)
		return problem == "", nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("cluster not ready after %s: %s", timeout, problem)
}

func readiness(ctx context.Context, cs kubernetes.Interface, want int) string {
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	if len(nl.Items) != want {
		return fmt.Sprintf("%d of %d nodes registered", len(nl.Items), want)
	}
	var bad []string
	for _, n := range nl.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			bad = append(bad, "node "+n.Name+" not Ready")
		}
	}
	pl, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	if len(pl.Items) == 0 {
		return "no kube-system pods yet"
	}
	for _, pod := range pl.Items {
		if pod.Status.Phase == corev1.PodSucceeded {
			continue
		}
		if !podready.Ready(&pod) {
			why := string(pod.Status.Phase)
			for _, s := range pod.Status.ContainerStatuses {
				if s.State.Waiting != nil {
					why = s.State.Waiting.Reason + ": " + s.State.Waiting.Message
				}
			}
			bad = append(bad, fmt.Sprintf("pod %s not ready (%s)", pod.Name, why))
		}
	}
	return strings.Join(bad, "; ")
}

// saveNotReadyPodLogs writes the logs of every container of the
// kube-system pods that are not ready into dir, as
// bringup-<pod>-<container>.log (the previous run's of a container that
// restarted: a crash loop's own words), the last 200 lines each, and
// returns the files written (none without dir) and the cause it knows
// among those logs, if any (knownBringupCause). A cluster that did not come
// up is deleted right after; these are what is left to say why.
func saveNotReadyPodLogs(ctx context.Context, cs kubernetes.Interface, dir string) (files []string, cause string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pl, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, ""
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			dir = ""
		}
	}
	tail := int64(200)
	for _, pod := range pl.Items {
		if pod.Status.Phase == corev1.PodSucceeded || podready.Ready(&pod) {
			continue
		}
		for _, s := range pod.Status.ContainerStatuses {
			opts := &corev1.PodLogOptions{Container: s.Name, TailLines: &tail, Previous: s.RestartCount > 0}
			out, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).DoRaw(ctx)
			if err != nil {
				out = []byte(fmt.Sprintf("logs of container %s (previous %v) not read: %v\n", s.Name, opts.Previous, err))
			} else if c := knownBringupCause(pod.Name, s.Name, string(out)); c != "" && cause == "" {
				cause = c
			}
			if dir == "" {
				continue
			}
			head := fmt.Sprintf("# pod %s/%s on node %s, container %s, %d restarts, previous run %v\n", pod.Namespace, pod.Name, pod.Spec.NodeName, s.Name, s.RestartCount, opts.Previous)
			f := filepath.Join(dir, "bringup-"+pod.Name+"-"+s.Name+".log")
			if os.WriteFile(f, append([]byte(head), out...), 0o644) == nil {
				files = append(files, f)
			}
		}
	}
	return files, cause
}

// knownBringupCause names the cause of a bring-up failure that a
// kube-system container's log shows, with its remedy, or "". The one known:
// the host's inotify instances ran out (fs.inotify.max_user_instances,
// shared by every kind node's processes), so kube-proxy exits at start with
// "failed complete: too many open files" (kind's known issue).
func knownBringupCause(pod, container, log string) string {
	if strings.Contains(log, "too many open files") {
		return fmt.Sprintf("%s/%s: \"too many open files\": the host's inotify instances ran out (fs.inotify.max_user_instances %d); %s",
			pod, container, capacity.InotifyLimit(), capacity.InotifyRemedy())
	}
	return ""
}
