package served

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/skew/served/servedtest"
)

// fakeLister replaces the proxy lister for the duration of a test.
func fakeLister(t *testing.T, list []string, err error) *int {
	t.Helper()
	calls := new(int)
	old := lister
	lister = func(context.Context) ([]string, string, error) {
		*calls++
		return list, "fake proxy", err
	}
	t.Cleanup(func() { lister = old })
	return calls
}

func TestVersionsCachesAndWorksOffline(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cachedir.Env, dir)
	calls := fakeLister(t, append([]string{"v1.37.0-alpha.1", "v1.13.0"}, servedtest.Versions...), nil)

	vs, err := Versions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(servedtest.Versions)+1 || vs[0].String() != "1.13.0" || vs[len(vs)-1].String() != "1.37.2" {
		t.Fatalf("ServedVersions = %v", vs)
	}
	if _, err := os.Stat(filepath.Join(dir, cacheFile)); err != nil {
		t.Fatalf("cache not written: %v", err)
	}

	// Offline: the lister fails, the cache answers.
	lister = func(context.Context) ([]string, string, error) {
		*calls++
		return nil, "", errors.New("network is unreachable")
	}
	vs2, err := Versions(context.Background())
	if err != nil {
		t.Fatalf("offline with cache: %v", err)
	}
	if len(vs2) != len(vs) || *calls != 1 {
		t.Errorf("offline call: %d versions, %d proxy calls; want %d versions and 1 call", len(vs2), *calls, len(vs))
	}
}

func TestVersionsNoCacheNoNetwork(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	fakeLister(t, nil, errors.New("dial tcp: network is unreachable"))
	_, err := Versions(context.Background())
	if err == nil || !strings.Contains(err.Error(), "network is unreachable") || !strings.Contains(err.Error(), "cache file") {
		t.Fatalf("error = %v; want the cause and the remedy", err)
	}
}

func TestVersionsCorruptCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cachedir.Env, dir)
	fakeLister(t, servedtest.Versions, nil)
	if err := os.WriteFile(filepath.Join(dir, cacheFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Versions(context.Background())
	if err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Fatalf("error = %v; want a remedy", err)
	}
}

func TestCheck(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	fakeLister(t, servedtest.Versions, nil)
	fakeProber(t, nil)
	ctx := context.Background()
	if err := Check(ctx, release.MustParseVersion("1.34.4")); err != nil {
		t.Errorf("1.34.4: %v", err)
	}
	err := Check(ctx, release.MustParseVersion("1.36.2"))
	if err == nil || !strings.Contains(err.Error(), "served v1.36 releases: 1.36.1, 1.36.3") {
		t.Errorf("1.36.2: %v", err)
	}
	err = Check(ctx, release.MustParseVersion("1.28.3"))
	if err == nil || !strings.Contains(err.Error(), "no v1.28 release is") || !strings.Contains(err.Error(), "1.29.6") {
		t.Errorf("1.28.3: %v", err)
	}
}

func TestFirstHTTPProxy(t *testing.T) {
	cases := map[string]string{
		"https://proxy.golang.org,direct":         "https://proxy.golang.org",
		"http://localhost:3000/|https://x.y":      "http://localhost:3000",
		"direct":                                  "",
		"off":                                     "",
		"direct,https://proxy.golang.org":         "",
		" https://a.example/mod , https://b.test": "https://a.example/mod",
	}
	for in, want := range cases {
		if got := firstHTTPProxy(in); got != want {
			t.Errorf("firstHTTPProxy(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeProber replaces the exact-version probe for the duration of a test.
func fakeProber(t *testing.T, served map[string]bool) *[]string {
	t.Helper()
	asked := new([]string)
	var mu sync.Mutex // ProbeNewer asks for the minors at once
	old := prober
	prober = func(_ context.Context, v string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		*asked = append(*asked, v)
		return served[v], nil
	}
	t.Cleanup(func() { prober = old })
	return asked
}

func TestCheckProbesVersionsMissingFromTheList(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	fakeLister(t, []string{"v1.30.14", "v1.37.2"}, nil)
	asked := fakeProber(t, map[string]bool{"v1.24.17": true})

	if err := Check(context.Background(), release.MustParseVersion("1.37.2")); err != nil || len(*asked) != 0 {
		t.Fatalf("listed version: err %v, probed %v; want nil and no probe", err, *asked)
	}
	if err := Check(context.Background(), release.MustParseVersion("1.24.17")); err != nil {
		t.Fatalf("version served by exact version: %v", err)
	}
	vs, err := Versions(context.Background())
	if err != nil || len(vs) != 3 || vs[0].String() != "1.24.17" {
		t.Fatalf("after the probe the cached list is %v (%v); want 1.24.17 first of 3", vs, err)
	}
	// the cache answers now: no second probe
	if err := Check(context.Background(), release.MustParseVersion("1.24.17")); err != nil || len(*asked) != 1 {
		t.Fatalf("second check: err %v, probes %v", err, *asked)
	}
	err = Check(context.Background(), release.MustParseVersion("1.26.15"))
	if err == nil || !strings.Contains(err.Error(), "not served by the Go module proxy (no v1.26 release is)") {
		t.Fatalf("unserved version: %v", err)
	}
}

// ProbeNewer finds the patches the list leaves out, across a gap of
// refused ones, and stops after four refused in a row; a minor the list
// holds nothing of is asked from its .0, past refused ones before the
// first it serves.
func TestProbeNewer(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	fakeLister(t, []string{"v1.29.6", "v1.37.2"}, nil)
	asked := fakeProber(t, map[string]bool{"v1.29.7": true, "v1.29.10": true, "v1.29.14": true, "v1.29.15": true,
		"v1.20.5": true, "v1.20.6": true, "v1.20.8": true, "v1.20.15": true})
	vs, err := ProbeNewer(context.Background(), []release.Minor{{Major: 1, Minor: 29}, {Major: 1, Minor: 20}, {Major: 1, Minor: 18}})
	if err != nil {
		t.Fatal(err)
	}
	if n := release.NewestServed(vs, release.Minor{Major: 1, Minor: 29}); n == nil || n.String() != "1.29.15" {
		t.Errorf("newest 1.29 after the probes: %v (list %v)", n, vs)
	}
	// 1.20.15 lies beyond four refused in a row (1.20.9-1.20.14): not asked.
	if n := release.NewestServed(vs, release.Minor{Major: 1, Minor: 20}); n == nil || n.String() != "1.20.8" {
		t.Errorf("newest 1.20 after the probes: %v (list %v)", n, vs)
	}
	if n := release.NewestServed(vs, release.Minor{Major: 1, Minor: 18}); n != nil {
		t.Errorf("1.18 served after the probes: %v", n)
	}
	var got29, got20, got18 []string
	for _, v := range *asked {
		switch {
		case strings.HasPrefix(v, "v1.29."):
			got29 = append(got29, v)
		case strings.HasPrefix(v, "v1.20."):
			got20 = append(got20, v)
		case strings.HasPrefix(v, "v1.18."):
			got18 = append(got18, v)
		}
	}
	if got := strings.Join(got29, " "); got != "v1.29.7 v1.29.8 v1.29.9 v1.29.10 v1.29.11 v1.29.12 v1.29.13 v1.29.14 v1.29.15 v1.29.16 v1.29.17 v1.29.18 v1.29.19" {
		t.Errorf("probed %s", got)
	}
	if got := strings.Join(got20, " "); got != "v1.20.0 v1.20.1 v1.20.2 v1.20.3 v1.20.4 v1.20.5 v1.20.6 v1.20.7 v1.20.8 v1.20.9 v1.20.10 v1.20.11 v1.20.12" {
		t.Errorf("probed %s", got)
	}
	if len(got18) != 30 {
		t.Errorf("probed %d patches of 1.18, which serves none; want 30", len(got18))
	}
}

func TestGoSetting(t *testing.T) {
	dir := t.TempDir()
	env := filepath.Join(dir, "env")
	if err := os.WriteFile(env, []byte("GOPROXY=http://localhost:9/mod\nGOFLAGS=-mod=mod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOENV", env)
	t.Setenv("GOPROXY", "")
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", dir+"/a"+string(filepath.ListSeparator)+dir+"/b")
	if got := goSetting("GOPROXY"); got != "http://localhost:9/mod" {
		t.Errorf("GOPROXY from the go env file = %q", got)
	}
	if got := goSetting("GOMODCACHE"); got != filepath.Join(dir, "a", "pkg", "mod") {
		t.Errorf("GOMODCACHE from GOPATH = %q", got)
	}
	t.Setenv("GOPROXY", "off")
	if got := goSetting("GOPROXY"); got != "off" {
		t.Errorf("GOPROXY from the environment = %q", got)
	}
	t.Setenv("GOENV", filepath.Join(dir, "none"))
	t.Setenv("GOPROXY", "")
	if got := goSetting("GOPROXY"); got != "https://proxy.golang.org,direct" {
		t.Errorf("default GOPROXY = %q", got)
	}
}

// A module the proxy serves but the checksum database does not know is not
// usable (the go command refuses it); with GOSUMDB=off it is.
func TestModuleVerifiable(t *testing.T) {
	known := map[string]bool{"/m/@v/v0.1.1.zip": true, "/m/@v/v0.1.2.zip": true, "/sumdb/sum.golang.org/lookup/m@v0.1.1": true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !known[r.URL.Path] {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("x"))
	}))
	defer srv.Close()
	t.Setenv("GOENV", "off")
	t.Setenv("GOPROXY", srv.URL)
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOSUMDB", "")
	for v, want := range map[string]bool{"v0.1.1": true, "v0.1.2": false, "v0.1.3": false} {
		if ok, err := ModuleVerifiable(context.Background(), "m", v); ok != want || err != nil {
			t.Errorf("m@%s: %v, %v; want %v", v, ok, err, want)
		}
	}
	t.Setenv("GOSUMDB", "off")
	if ok, err := ModuleVerifiable(context.Background(), "m", "v0.1.2"); !ok || err != nil {
		t.Errorf("m@v0.1.2 with GOSUMDB=off: %v, %v; want true", ok, err)
	}
}
