package served

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A module version is served when the proxy hands out its zip: an answered
// .info with a refused zip (k8s.io/kube-controller-manager v0.22.17) is not.
func TestModuleServedAsksForTheZip(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/v0.22.16.zip"), strings.HasSuffix(r.URL.Path, ".info"):
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer proxy.Close()
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOPROXY", proxy.URL)
	for v, want := range map[string]bool{"v0.22.17": false, "v0.22.16": true} {
		got, err := ModuleServed(context.Background(), "k8s.io/kube-controller-manager", v)
		if err != nil || got != want {
			t.Errorf("ModuleServed(%s) = %v, %v; want %v", v, got, err, want)
		}
	}
}
