//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// runnerKubeconfig applies, as the cluster's administrator (cs), what
// 'bin rbac' prints, and writes a kubeconfig that holds a token of its
// ServiceAccount and the cluster of admin (a kubeconfig file): what
// docs/rbac.md tells a vendor to do. The objects are removed when the test
// ends.
func runnerKubeconfig(ctx context.Context, t *testing.T, bin, admin string, cs kubernetes.Interface) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, bin, "rbac").Output()
	if err != nil {
		t.Fatalf("skewproof rbac: %v", err)
	}
	docs := bytes.Split(out, []byte("\n---\n"))
	if len(docs) != 3 {
		t.Fatalf("skewproof rbac printed %d documents, want 3", len(docs))
	}
	var sa corev1.ServiceAccount
	var cr rbacv1.ClusterRole
	var crb rbacv1.ClusterRoleBinding
	for i, into := range []any{&sa, &cr, &crb} {
		if err := yaml.UnmarshalStrict(docs[i], into); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
	}
	if _, err := cs.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, crb.Name, metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoles().Delete(ctx, cr.Name, metav1.DeleteOptions{})
		_ = cs.CoreV1().ServiceAccounts(sa.Namespace).Delete(ctx, sa.Name, metav1.DeleteOptions{})
	})
	hours := int64(2 * 3600)
	tok, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &hours}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	if cur == nil {
		t.Fatalf("%s has no current context", admin)
	}
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{sa.Name: {Token: tok.Status.Token}}
	cur.AuthInfo = sa.Name
	path := filepath.Join(t.TempDir(), "runner.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// apiserverMetrics is the API server's /metrics (read as the
// administrator): the 403 answers of its handlers (apiserver_request_total,
// by verb, resource, subresource and dry run: admission's refusals), and
// the requests its authorizers refused (authorization_attempts_total
// with result denied or no-opinion: RBAC refuses with no opinion, and a
// request no authorizer allows is answered 403 before any handler, so it
// is in no request metric).
type apiserverMetrics struct {
	forbidden map[string]float64
	refused   float64
}

func readMetrics(ctx context.Context, t *testing.T, cs kubernetes.Interface) apiserverMetrics {
	t.Helper()
	b, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	m := apiserverMetrics{forbidden: map[string]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || name != "apiserver_request_total" && name != "authorization_attempts_total" {
			continue
		}
		i := strings.LastIndexByte(rest, '}')
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[i+1:]), 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		l := map[string]string{}
		for _, kv := range label.FindAllStringSubmatch(rest[:i], -1) {
			l[kv[1]] = kv[2]
		}
		switch {
		case name == "apiserver_request_total" && l["code"] == "403":
			m.forbidden[fmt.Sprintf("%s %s/%s dry_run=%s", l["verb"], l["resource"], l["subresource"], l["dry_run"])] += v
		case name == "authorization_attempts_total" && (l["result"] == "denied" || l["result"] == "no-opinion"):
			m.refused += v
		}
	}
	return m
}

// ownNodeRefusals is how many requests profiles/agent/own-node has
// refused on purpose by authorization: an agent deleting a profile (dry
// run), which its Role does not allow.
const ownNodeRefusals = 1

// unexpected403 are the 403 answers of handlers in after that were not in before,
// but creations and dry runs. A creation is refused 403 to every component
// in a namespace being deleted (NamespaceLifecycle admission: the
// controllers' ConfigMaps, ControllerRevisions and ReplicaSets, the
// kubelet's events, in the namespaces of finished specs), and by Pod
// Security admission to apparmor/psa's pods on purpose; a creation the run
// lacked the permission for fails its spec, whose verdict is pinned. The
// dry runs are profiles/agent/own-node's, with an agent's token, refused
// on purpose. What remains (a read, a watch, an update, a deletion) is
// what a wait or a clean-up could absorb unseen.
func unexpected403(before, after map[string]float64) []string {
	var out []string
	for k, n := range after {
		if n <= before[k] || strings.HasPrefix(k, "POST ") || !strings.HasSuffix(k, "dry_run=") {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %.0f", k, n-before[k]))
	}
	slices.Sort(out)
	return out
}

// Only the 403 answers the specs provoke on purpose are expected (a unit
// test of unexpected403, named to run with TestIntegrationVendorMode).
func TestIntegrationVendorModeUnexpected403(t *testing.T) {
	before := map[string]float64{"WATCH pods/ dry_run=": 1}
	after := map[string]float64{"WATCH pods/ dry_run=": 3, "POST pods/ dry_run=": 6, "POST configmaps/ dry_run=": 53, "DELETE seccompprofiles/ dry_run=All": 1, "GET nodes/proxy dry_run=": 1}
	got := unexpected403(before, after)
	want := []string{"GET nodes/proxy dry_run=: 1", "WATCH pods/ dry_run=: 2"}
	if !slices.Equal(got, want) {
		t.Errorf("unexpected403 = %v, want %v", got, want)
	}
}
