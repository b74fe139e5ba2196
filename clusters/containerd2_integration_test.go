//go:build integration

package clusters_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/nodefacts"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/clusters"
)

// A worker whose node image has containerd 2 (noderuntime.Runtime.CRI) beside a
// control plane with Debian's containerd 1.7: the kubelet reports
// containerd://2.4.2, RuntimeDefault runs in seccomp filter mode, and the
// restricted handler skewproof-noseccomp runs the same pod without seccomp.
func TestIntegrationContainerd2Worker(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Minute)
	defer cancel()

	cs := upForTest(ctx, t, "c2-it", clusters.UpOptions{APIServer: itAPIServer, Kubelets: []string{itKubelet},
		Runtimes: []noderuntime.Runtime{{CRI: noderuntime.CRIContainerd2}}}).cs

	var worker string
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		rt := n.Status.NodeInfo.ContainerRuntimeVersion
		t.Logf("node %s: kubelet %s, runtime %s", n.Name, n.Status.NodeInfo.KubeletVersion, rt)
		switch {
		case cp && !strings.HasPrefix(rt, "containerd://1.7."):
			t.Errorf("control plane %s runs %s, want Debian's containerd 1.7", n.Name, rt)
		case !cp && rt != "containerd://2.4.2":
			t.Errorf("worker %s runs %s, want containerd://2.4.2", n.Name, rt)
		case !cp:
			worker = n.Name
		}
	}
	if worker == "" {
		t.Fatal("no worker with containerd 2")
	}
	for _, args := range [][]string{
		{"containerd", "--version"},
		{"sh", "-c", "readlink -f /proc/$(pidof containerd)/exe"},
		{"runc", "--version"},
	} {
		out, err := clusters.Docker(ctx, append([]string{"exec", worker}, args...)...)
		t.Logf("%s: %s %v", strings.Join(args, " "), strings.TrimSpace(out), err)
	}
	if out, _ := clusters.Docker(ctx, "exec", worker, "containerd", "--version"); !strings.Contains(out, " v2.4.2") {
		t.Errorf("containerd --version in %s: %q, want v2.4.2", worker, out)
	}

	if _, err := nodefacts.EnsureRestrictedRuntimeClasses(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "c2-seccomp-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		profile      corev1.SeccompProfileType
		runtimeClass string
		want         string
	}{
		{corev1.SeccompProfileTypeRuntimeDefault, "", "2"},
		{corev1.SeccompProfileTypeUnconfined, "", "0"},
		{corev1.SeccompProfileTypeRuntimeDefault, nodefacts.NoSeccompHandler, "0"},
	} {
		rc := tc.runtimeClass
		if rc == "" {
			rc = "no RuntimeClass"
		}
		t.Run(fmt.Sprintf("%s/%s", tc.profile, rc), func(t *testing.T) {
			got, err := seccompMode(ctx, cs, ns.Name, worker, tc.profile, tc.runtimeClass)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("containerd 2 worker %s: seccompProfile %s, RuntimeClass %q gives Seccomp: %s, want %s", worker, tc.profile, tc.runtimeClass, got, tc.want)
			}
		})
	}
}
