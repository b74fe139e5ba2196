package served

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/skew/served/servedtest"

	"github.com/skewproof/skewproof/skew"
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
	ctx := context.Background()
	if err := Check(ctx, skew.MustParseVersion("1.34.4")); err != nil {
		t.Errorf("1.34.4: %v", err)
	}
	err := Check(ctx, skew.MustParseVersion("1.36.2"))
	if err == nil || !strings.Contains(err.Error(), "served v1.36 releases: 1.36.1, 1.36.3") {
		t.Errorf("1.36.2: %v", err)
	}
	err = Check(ctx, skew.MustParseVersion("1.28.3"))
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
