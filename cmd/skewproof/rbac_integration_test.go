//go:build integration

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// logRequests has the API server log every request with its answer
// (klog verbosity 3: its httplog lines), through its /debug/flags/v
// endpoint, as the administrator (cs).
func logRequests(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	if _, err := cs.Discovery().RESTClient().Put().AbsPath("/debug/flags/v").Body([]byte("3")).DoRaw(ctx); err != nil {
		t.Fatalf("raising the API server's log verbosity: %v", err)
	}
}

// refusedRequests are the requests of skewproof's own clients (the
// runner, the suite processes, the node agent: each a user agent that
// starts with "skewproof") that the API server answered 403 since the
// time since, from its log on the control-plane node (the node's pod log
// files): "VERB URI user-agent". A refusal by the authorizers is answered
// before any handler and shows in no request metric; this log has it.
// Two kinds are refused on purpose and left out: profiles/agent/own-node's
// dry runs with an agent's token, and Pod Security admission refusing
// apparmor/psa's pods.
func refusedRequests(ctx context.Context, t *testing.T, controlPlane string, since time.Time) []string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "docker", "exec", controlPlane, "sh", "-c",
		"cat /var/log/pods/kube-system_kube-apiserver-*/kube-apiserver/*.log").Output()
	if err != nil {
		t.Fatalf("reading the API server's log on %s: %v", controlPlane, err)
	}
	field := regexp.MustCompile(`(\w+)="([^"]*)"`)
	var refused []string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, `"HTTP"`) || !strings.Contains(line, "resp=403") {
			continue
		}
		ts, _, _ := strings.Cut(line, " ")
		if at, err := time.Parse(time.RFC3339Nano, ts); err != nil || at.Before(since) {
			continue
		}
		f := map[string]string{}
		for _, kv := range field.FindAllStringSubmatch(line, -1) {
			f[kv[1]] = kv[2]
		}
		ua := f["userAgent"]
		if !strings.HasPrefix(ua, "skewproof") {
			continue
		}
		uri := f["URI"]
		switch {
		case strings.Contains(uri, "dryRun=All") || strings.Contains(uri, "/own-node-"):
			continue // profiles/agent/own-node, with an agent's token (a deletion's dry run is in its body)
		case f["verb"] == "POST" && strings.HasSuffix(strings.Split(uri, "?")[0], "/pods"):
			continue // Pod Security admission: apparmor/psa
		}
		name, _, _ := strings.Cut(ua, " ")
		refused = append(refused, f["verb"]+" "+uri+" "+name)
	}
	return refused
}
