package kubeclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("{not yaml"), 0o600)

	c, err := Load(good)
	if err != nil || c.Config.Host != "https://127.0.0.1:6443" || c.Core == nil || c.Dynamic == nil {
		t.Fatalf("Load(good) = %+v, %v", c, err)
	}
	for _, p := range []string{bad, filepath.Join(dir, "missing")} {
		if _, err := Config(p); err == nil || !strings.Contains(err.Error(), "reading kubeconfig "+p) {
			t.Errorf("Config(%s) = %v: want an error naming the file", p, err)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := Config(""); err == nil || !strings.Contains(err.Error(), "pass --kubeconfig") {
		t.Errorf("Config(\"\") outside a pod = %v: want the remedy", err)
	}
}
