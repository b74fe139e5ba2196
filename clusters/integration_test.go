//go:build integration

package clusters_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/runner"
)

// The integration test boots a real mixed-version cluster, built offline:
// control plane 1.37.2 and one worker with kubelet 1.34.4. On each node a
// pod with seccompProfile RuntimeDefault must run in seccomp filter mode
// (Seccomp: 2) and one with Unconfined without (Seccomp: 0).
const (
	itAPIServer = "1.37.2"
	itKubelet   = "1.34.4"
)

func TestIntegrationMixedCluster(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 70*time.Minute)
	defer cancel()

	it := upForTest(ctx, t, "it", clusters.UpOptions{APIServer: itAPIServer, Kubelets: []string{itKubelet}})
	name, kubeconfig, cs := it.name, it.kubeconfig, it.cs

	// Security (docs/reliability.md): the kubeconfig is private to its
	// owner, and the only published port — the API server's — listens on
	// loopback.
	t.Run("kubeconfig mode and loopback only", func(t *testing.T) {
		fi, err := os.Stat(kubeconfig)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("kubeconfig %s: mode %v (%v), want 0600", kubeconfig, fi.Mode().Perm(), err)
		}
		ids, err := clusters.Docker(ctx, "ps", "-q", "--filter", "label=io.x-k8s.kind.cluster="+name)
		if err != nil || len(strings.Fields(ids)) != 2 {
			t.Fatalf("node containers of %s: %q (%v)", name, ids, err)
		}
		published := 0
		for _, id := range strings.Fields(ids) {
			ports, err := clusters.Docker(ctx, "port", id)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(strings.TrimSpace(ports), "\n") {
				if l == "" {
					continue
				}
				published++
				if _, host, _ := strings.Cut(l, " -> "); !strings.HasPrefix(host, "127.0.0.1:") {
					t.Errorf("node %s publishes %q beyond loopback", id, l)
				}
			}
		}
		if published == 0 {
			t.Error("no published port: the API server's must be there (on 127.0.0.1)")
		}
	})

	// A second run of the same name refuses with one line and leaves the
	// first one's cluster alone (it used to delete it on its way out).
	t.Run("same name refused, nothing deleted", func(t *testing.T) {
		_, err := runner.Run(ctx, runner.Options{Name: name, JUnitDir: t.TempDir(), Progress: it.p,
			Suites: []string{"seccomp"}, Timeout: time.Minute, FlakeAttempts: 1,
			Up: clusters.UpOptions{APIServer: itAPIServer, Kubelets: []string{itKubelet}}})
		if !errors.As(err, new(clusters.ExistsError)) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("second run of %s: %v; want one line saying the cluster exists", name, err)
		}
		names, lerr := clusters.NewProvider(nil).List(ctx)
		if lerr != nil || !slices.Contains(names, name) {
			t.Fatalf("after the refused run: clusters %v (%v); %s must still exist", names, lerr, name)
		}
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			t.Fatalf("the first cluster stopped answering: %v", err)
		}
	})

	// The controller manager's client rate (ControllerManagerQPS) reached
	// its command line through kind's kubeadm config patch.
	t.Run("controller manager rate", func(t *testing.T) {
		pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-controller-manager"})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("kube-controller-manager pods: %v %v", pods, err)
		}
		cmd := strings.Join(pods.Items[0].Spec.Containers[0].Command, " ")
		for _, want := range []string{fmt.Sprintf("--kube-api-qps=%d", clusters.ControllerManagerQPS), fmt.Sprintf("--kube-api-burst=%d", 2*clusters.ControllerManagerQPS)} {
			if !strings.Contains(cmd, want) {
				t.Errorf("kube-controller-manager lacks %s: %s", want, cmd)
			}
		}
	})

	// The start-up tuning (probes.go, controllerManagerPatch) reached the
	// control plane's static pods through kubeadm's patches.
	t.Run("control plane start-up tuning", func(t *testing.T) {
		for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=" + c})
			if err != nil || len(pods.Items) != 1 {
				t.Fatalf("%s pods: %v %v", c, pods, err)
			}
			sp := pods.Items[0].Spec.Containers[0].StartupProbe
			if sp == nil || sp.PeriodSeconds != 1 || sp.InitialDelaySeconds != 0 || sp.FailureThreshold != 240 || sp.HTTPGet == nil {
				t.Errorf("%s startup probe %+v; want kubeadm's HTTP probe every 1 s from the start, 240 failures", c, sp)
			}
		}
		pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-controller-manager"})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("kube-controller-manager pods: %v %v", pods, err)
		}
		if cmd := strings.Join(pods.Items[0].Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--leader-elect-retry-period=500ms") {
			t.Errorf("kube-controller-manager lacks --leader-elect-retry-period=500ms: %s", cmd)
		}
	})

	t.Run("no cluster DNS", func(t *testing.T) {
		// kubeadm's CoreDNS add-on is skipped (docs/clusters/README.md).
		_, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("deployment kube-system/coredns: %v, want not found", err)
		}
		if _, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("configmap kube-system/coredns: %v, want not found", err)
		}
	})

	t.Run("apiserver version", func(t *testing.T) {
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != "v"+itAPIServer {
			t.Errorf("/version reports %s, want v%s", v.GitVersion, itAPIServer)
		}
	})

	t.Run("kubelet versions", func(t *testing.T) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, n := range nodes.Items {
			kv := n.Status.NodeInfo.KubeletVersion
			got[kv]++
			if lbl := n.Labels[nodefacts.KubeletVersionLabel]; lbl != kv {
				t.Errorf("node %s: label %s=%q, kubelet reports %s", n.Name, nodefacts.KubeletVersionLabel, lbl, kv)
			}
		}
		want := map[string]int{"v" + itAPIServer: 1, "v" + itKubelet: 1}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("kubelet versions %v, want %v", got, want)
		}
	})

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "it-seccomp-"}}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range it.c.Nodes {
		for _, tc := range []struct {
			profile corev1.SeccompProfileType
			want    string
		}{{corev1.SeccompProfileTypeRuntimeDefault, "2"}, {corev1.SeccompProfileTypeUnconfined, "0"}} {
			n, tc := n, tc
			t.Run(fmt.Sprintf("%s/%s", n.Name, tc.profile), func(t *testing.T) {
				got, err := seccompMode(ctx, cs, ns.Name, n.Name, tc.profile, "")
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Errorf("node %s (kubelet %s): seccompProfile %s gives Seccomp: %s, want %s", n.Name, n.KubeletVersion, tc.profile, got, tc.want)
				}
			})
		}
	}
}

// itCluster is a cluster a test brought up (upForTest).
type itCluster struct {
	name, kubeconfig string
	p                *progress.Progress
	c                *clusters.Cluster
	cs               kubernetes.Interface
}

// upForTest brings up the cluster opts describes, named prefix-<n>, with
// its kubeconfig in a temporary directory, and deletes it when the test
// ends, checking that nothing of it is left.
func upForTest(ctx context.Context, t *testing.T, prefix string, opts clusters.UpOptions) *itCluster {
	t.Helper()
	it := &itCluster{name: fmt.Sprintf("%s-%d", prefix, time.Now().Unix()%100000), kubeconfig: t.TempDir() + "/kubeconfig", p: progress.New(os.Stderr)}
	opts.Name, opts.Kubeconfig = it.name, it.kubeconfig
	c, err := clusters.NewProvider(it.p).Up(ctx, opts)
	if err != nil {
		t.Fatalf("cluster up: %v", err)
	}
	t.Cleanup(func() {
		if err := clusters.NewProvider(it.p).Down(context.Background(), it.name, it.kubeconfig); err != nil {
			t.Errorf("cluster down: %v", err)
		}
		assertNothingLeft(t, it.name)
	})
	cl, err := kubeclient.Load(it.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	it.c, it.cs = c, cl.Core
	return it
}

var seccompLine = regexp.MustCompile(`(?m)^Seccomp:\s*(\d+)`)

// seccompMode runs a pod pinned to node, under the RuntimeClass
// runtimeClass ("" for none), and returns the Seccomp field of its
// /proc/1/status.
func seccompMode(ctx context.Context, cs kubernetes.Interface, ns, node string, profile corev1.SeccompProfileType, runtimeClass string) (string, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "seccomp-" + strings.ToLower(string(profile)) + "-"},
		Spec: corev1.PodSpec{
			NodeName:      node,
			RestartPolicy: corev1.RestartPolicyNever,
			Tolerations:   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: profile},
			},
			Containers: []corev1.Container{{
				Name: "c", Image: nodefacts.BusyBoxImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"cat", "/proc/1/status"},
			}},
		},
	}
	if runtimeClass != "" {
		pod.Spec.RuntimeClassName = &runtimeClass
	}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if got.Status.Phase == corev1.PodSucceeded {
			break
		}
		if got.Status.Phase == corev1.PodFailed {
			return "", fmt.Errorf("pod %s failed: %s", pod.Name, got.Status.Message)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("pod %s still %s after 3m: %+v", pod.Name, got.Status.Phase, got.Status.ContainerStatuses)
		}
		time.Sleep(time.Second)
	}
	raw, err := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return "", err
	}
	m := seccompLine.FindSubmatch(raw)
	if m == nil {
		return "", fmt.Errorf("no Seccomp line in /proc/1/status: %q", bytes.TrimSpace(raw))
	}
	return string(m[1]), nil
}

func assertNothingLeft(t *testing.T, name string) {
	for _, args := range [][]string{
		{"ps", "-a", "--filter", "label=io.x-k8s.kind.cluster=" + name, "-q"},
		{"network", "ls", "--filter", "name=^" + clusters.NetworkName(name) + "$", "-q"},
		{"ps", "-a", "--filter", "name=^" + clusters.BuildContainerPrefix, "-q"},
	} {
		out, err := clusters.Docker(context.Background(), args...)
		if err != nil {
			t.Errorf("docker %v: %v", args, err)
		} else if out != "" {
			t.Errorf("left behind after down: docker %v: %s", args, out)
		}
	}
}
