// Package served asks the Go module proxy which versions of k8s.io/kubernetes
// it serves (whose sources skewproof can build), and keeps the answer in a
// cache file under CacheDir, so that it works offline once asked. The rules
// that use the list are in package skew.
package served

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/skew/release"
)

// KubernetesModule is the module whose served versions bound what skewproof
// can build and test.
const KubernetesModule = "k8s.io/kubernetes"

// cacheFile is the name of the cache file under CacheDir.
const cacheFile = "served-k8s.io-kubernetes.json"

// cacheRecord is the on-disk form of the served version list.
type cacheRecord struct {
	Module   string    `json:"module"`
	Source   string    `json:"source"`
	Fetched  time.Time `json:"fetched"`
	Versions []string  `json:"versions"`
}

// lister asks the module proxy for the served versions. Tests replace
// it so that they never need the network.
var lister = listFromProxy

// CachePath returns the path of the served-versions cache file.
func CachePath() (string, error) {
	d, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, cacheFile), nil
}

// Versions returns the versions of k8s.io/kubernetes whose sources the
// Go module proxy serves, oldest first. The proxy is asked once; the answer
// is cached and used from then on, so this works offline once the cache
// exists. Delete the cache file to ask again.
func Versions(ctx context.Context) ([]*version.Version, error) {
	path, err := CachePath()
	if err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(path); err == nil {
		var c cacheRecord
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("reading served-versions cache %s: %v; delete the file to fetch the list again", path, err)
		}
		return parseVersionList(c.Versions, path)
	}
	list, source, err := lister(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing served versions of %s through the Go module proxy: %w; connect once to the proxy (see 'go env GOPROXY') or provide the cache file %s", KubernetesModule, err, path)
	}
	vs, err := parseVersionList(list, source)
	if err != nil {
		return nil, err
	}
	c := cacheRecord{Module: KubernetesModule, Source: source, Fetched: time.Now().UTC()}
	for _, v := range vs {
		c.Versions = append(c.Versions, "v"+v.String())
	}
	if err := WriteCache(path, c.Versions, source); err != nil {
		return nil, err
	}
	return vs, nil
}

// WriteCache writes a served-versions cache file. Tests and offline
// installations use it to provide the list without the network.
func WriteCache(path string, versions []string, source string) error {
	c := cacheRecord{Module: KubernetesModule, Source: source, Fetched: time.Now().UTC(), Versions: versions}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating cache directory: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing served-versions cache: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing served-versions cache: %w", err)
	}
	return nil
}

func parseVersionList(list []string, source string) ([]*version.Version, error) {
	var out []*version.Version
	for _, s := range list {
		v, err := release.ParseVersion(s)
		if err != nil {
			continue // pre-releases and odd tags are never served releases
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no served release of %s found in %s; delete it to fetch the list again", KubernetesModule, source)
	}
	sort.Sort(version.Collection(out))
	return dedupe(out), nil
}

func dedupe(vs []*version.Version) []*version.Version {
	var out []*version.Version
	for i, v := range vs {
		if i > 0 && v.Equal(vs[i-1]) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// Check returns an error naming the served versions of the same minor
// (or all served versions) when v is not served. The proxy's version list
// leaves out releases it serves by exact version (v1.19-v1.29 patches among
// them), so a version missing from the list is asked for by itself; when
// the proxy hands out its module zip, it is added to the cached list.
func Check(ctx context.Context, v *version.Version) error {
	served, err := Versions(ctx)
	if err != nil {
		return err
	}
	listErr := release.CheckServedIn(served, v)
	if listErr == nil {
		return nil
	}
	ok, err := prober(ctx, "v"+v.String())
	if err != nil {
		return fmt.Errorf("%v; asking the proxy for v%s itself failed: %w", listErr, v, err)
	}
	if !ok {
		return listErr
	}
	return addToCache(v)
}

// ProbeNewer asks the proxy, for each minor, for the patches after the
// newest one its list holds, one by one until four in a row are refused
// (it refuses v1.29.11 to v1.29.13 and serves v1.29.14), at most 30, and
// adds those it serves to the cached list: the list leaves out releases
// the proxy serves by exact version (v1.29.7 to v1.29.15 among them), so
// a plan that takes the newest patch of a minor asks first. A minor the
// list holds nothing of (v1.19 to v1.28 on a machine whose module cache is
// empty: the proxy lists none of them) is asked from its .0 on, and the
// four refused in a row count only after one it serves. The minors are
// asked at once, each patch after the other.
// It returns the list with them.
func ProbeNewer(ctx context.Context, minors []release.Minor) ([]*version.Version, error) {
	list, err := Versions(ctx)
	if err != nil {
		return nil, err
	}
	found := make([][]*version.Version, len(minors))
	var wg sync.WaitGroup
	for i, m := range minors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[i] = probeMinor(ctx, m, release.NewestServed(list, m))
		}()
	}
	wg.Wait()
	for _, vs := range found {
		for _, v := range vs {
			if err := addToCache(v); err != nil {
				return nil, err
			}
		}
	}
	return Versions(ctx)
}

// probeMinor asks the proxy for the patches of m after newest (from .0
// when newest is nil; ProbeNewer) and returns those it serves.
func probeMinor(ctx context.Context, m release.Minor, newest *version.Version) []*version.Version {
	first, seen := 0, newest != nil
	if seen {
		first = newest.Segments()[2] + 1
	}
	var out []*version.Version
	refused := 0
	for p := first; p < first+30 && !(seen && refused >= 4); p++ {
		v := version.Must(version.NewVersion(fmt.Sprintf("%d.%d.%d", m.Major, m.Minor, p)))
		ok, err := prober(ctx, "v"+v.String())
		if err != nil {
			break
		}
		if !ok {
			refused++
			continue
		}
		seen, refused = true, 0
		out = append(out, v)
	}
	return out
}

// prober asks the proxy whether it serves one version of k8s.io/kubernetes.
// Tests replace it.
var prober = func(ctx context.Context, v string) (bool, error) { return ModuleServed(ctx, KubernetesModule, v) }

// ModuleServed reports whether the Go module proxy serves module at
// version v: its zip (a module cache holding the zip counts as served). The
// .info alone does not: the proxy answers k8s.io/kube-controller-manager
// v0.22.17's .info and refuses its zip (403). It reads the go settings
// without running the go command; with no HTTP proxy in GOPROXY it answers
// false.
func ModuleServed(ctx context.Context, module, v string) (bool, error) {
	if mc := goSetting("GOMODCACHE"); mc != "" {
		if _, err := os.Stat(filepath.Join(mc, "cache", "download", module, "@v", v+".zip")); err == nil {
			return true, nil
		}
	}
	base := firstHTTPProxy(goSetting("GOPROXY"))
	if base == "" {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return fileServed(ctx, base+"/"+module+"/@v/"+v+".zip", module+"@"+v)
}

// ModuleVerifiable reports whether the go command can use module at
// version v: the proxy serves its zip (ModuleServed) and the checksum
// database knows it. The proxy hands out k8s.io/legacy-cloud-providers
// v0.27.16, whose lookup in sum.golang.org is "404 Not Found", and the go
// command then refuses it. With GOSUMDB=off only the zip counts. The
// lookup the go command has cached counts as known.
func ModuleVerifiable(ctx context.Context, module, v string) (bool, error) {
	ok, err := ModuleServed(ctx, module, v)
	if err != nil || !ok {
		return ok, err
	}
	db := goSetting("GOSUMDB")
	if db == "" {
		db = "sum.golang.org"
	}
	if db == "off" {
		return true, nil
	}
	db, _, _ = strings.Cut(db, " ") // "NAME KEY URL" forms: the name
	if mc := goSetting("GOMODCACHE"); mc != "" {
		if _, err := os.Stat(filepath.Join(mc, "cache", "download", "sumdb", db, "lookup", module+"@"+v)); err == nil {
			return true, nil
		}
	}
	base := firstHTTPProxy(goSetting("GOPROXY"))
	if base == "" {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return fileServed(ctx, base+"/sumdb/"+db+"/lookup/"+module+"@"+v, module+"@"+v+" in "+db)
}

// addToCache adds v to the cached list of served versions.
func addToCache(v *version.Version) error {
	path, err := CachePath()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c cacheRecord
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("reading served-versions cache %s: %v; delete the file to fetch the list again", path, err)
	}
	vs, err := parseVersionList(append(c.Versions, "v"+v.String()), path)
	if err != nil {
		return err
	}
	var list []string
	for _, x := range vs {
		list = append(list, "v"+x.String())
	}
	return WriteCache(path, list, c.Source)
}

// listFromProxy asks the go command (so GOPROXY, GOFLAGS, GONOSUMDB and
// the rest of 'go env' apply) for the versions of k8s.io/kubernetes the proxy
// lists. A listed version is not necessarily downloadable, so each listed
// release is then checked by requesting the first byte of its module zip
// from the first HTTP proxy in GOPROXY; versions whose zip is already in the
// local module cache are served by definition.
func listFromProxy(ctx context.Context) ([]string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "skewproof-served-")
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-versions", "-json", KubernetesModule)
	cmd.Dir = tmp // outside any module, so the project's go.mod plays no part
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("go list -m -versions %s: %v: %s", KubernetesModule, err, strings.TrimSpace(stderr.String()))
	}
	var mod struct{ Versions []string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, "", fmt.Errorf("decoding go list output: %w", err)
	}

	proxy, modcache := goEnv(ctx, "GOPROXY"), goEnv(ctx, "GOMODCACHE")
	base := firstHTTPProxy(proxy)
	seen := map[string]bool{}
	var served []string
	for _, v := range mod.Versions {
		if _, err := release.ParseVersion(v); err != nil {
			continue
		}
		if base != "" {
			ok, err := zipServed(ctx, base, v)
			if err != nil {
				return nil, "", err
			}
			if !ok {
				continue
			}
		}
		seen[v] = true
		served = append(served, v)
	}
	if modcache != "" {
		zips, _ := filepath.Glob(filepath.Join(modcache, "cache", "download", KubernetesModule, "@v", "v*.zip"))
		for _, z := range zips {
			v := strings.TrimSuffix(filepath.Base(z), ".zip")
			if _, err := release.ParseVersion(v); err == nil && !seen[v] {
				seen[v] = true
				served = append(served, v)
			}
		}
	}
	source := "GOPROXY=" + proxy
	return served, source, nil
}

func goEnv(ctx context.Context, name string) string {
	out, err := exec.CommandContext(ctx, "go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// goSetting reads a go command setting the way the go command does (the
// environment, then the go env file, then the default) without running it:
// a refused version leaves nothing behind, not even the go command's own
// counters in the user's config directory.
func goSetting(name string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	file := os.Getenv("GOENV")
	if file == "" {
		if d, err := os.UserConfigDir(); err == nil {
			file = filepath.Join(d, "go", "env")
		}
	}
	if b, err := os.ReadFile(file); err == nil && file != "off" {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && k == name && v != "" {
				return v
			}
		}
	}
	switch name {
	case "GOPROXY":
		return "https://proxy.golang.org,direct"
	case "GOMODCACHE":
		gopath := goSetting("GOPATH")
		if gopath == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			gopath = filepath.Join(home, "go")
		}
		return filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}
	return ""
}

// firstHTTPProxy returns the first http(s) entry of a GOPROXY list.
func firstHTTPProxy(goproxy string) string {
	for _, p := range strings.FieldsFunc(goproxy, func(r rune) bool { return r == ',' || r == '|' }) {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://") {
			return strings.TrimSuffix(p, "/")
		}
		if p == "off" || p == "direct" {
			return ""
		}
	}
	return ""
}

// zipServed reports whether the proxy hands out the module zip of version v.
func zipServed(ctx context.Context, base, v string) (bool, error) {
	return fileServed(ctx, base+"/"+KubernetesModule+"/@v/"+v+".zip", KubernetesModule+"@"+v)
}

// fileServed reports whether the proxy hands out url (its first byte).
func fileServed(ctx context.Context, url, what string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Range", "bytes=0-0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, fmt.Errorf("checking %s: %w", what, err)
	}
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent:
		return true, nil
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return false, nil
	}
	return false, errors.New("unexpected status " + resp.Status + " for " + what)
}
