// Package profiles holds the seccomp profile fixtures the suites use and
// installs them on the nodes of a cluster, under the kubelet's seccomp root
// (<kubelet root-dir>/seccomp, spec/000_62e800f079270549.txt §Seccomp root
// path configuration).
//
// Installation reports a result per node and profile, so that per-node
// status objects (spec/004_ef29f3f25d7f54d5.txt) can be built on top of it.
package profiles

import (
	"context"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
)

//go:embed seccomp/*.json
var seccompFiles embed.FS

// Dir is the directory, relative to the kubelet's seccomp root, that holds
// every profile of this package; a pod's localhostProfile is Dir + "/" + file.
const Dir = "skewproof"

// DefaultKubeletRoot is the kubelet --root-dir of kind nodes.
const DefaultKubeletRoot = "/var/lib/kubelet"

// Names of the seccomp profiles, as a pod's localhostProfile.
const (
	// DenyMkdir makes mkdir and mkdirat fail with EPERM; everything else is
	// allowed (skew.SeccompLocalhostProfile names the same file).
	DenyMkdir = Dir + "/deny-mkdir.json"
	// DenyExecve makes execve and execveat fail with EPERM, so a container
	// cannot start its process.
	DenyExecve = Dir + "/deny-execve.json"
	// LogMkdir logs mkdir and mkdirat (SCMP_ACT_LOG) and allows them.
	LogMkdir = Dir + "/log-mkdir.json"
	// InvalidAction uses an action no runtime knows.
	InvalidAction = Dir + "/invalid-action.json"
	// Missing is never installed anywhere (failure row 4).
	Missing = Dir + "/missing.json"
)

// Profile is one seccomp profile file.
type Profile struct {
	// Name is the path relative to the seccomp root, e.g. "skewproof/deny-mkdir.json".
	Name    string
	Content []byte
}

// Seccomp returns every seccomp profile of this package, sorted by name.
func Seccomp() []Profile {
	entries, err := seccompFiles.ReadDir("seccomp")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []Profile
	for _, e := range entries {
		b, err := seccompFiles.ReadFile("seccomp/" + e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, Profile{Name: Dir + "/" + e.Name(), Content: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SeccompByName returns one profile of Seccomp().
func SeccompByName(name string) (Profile, bool) {
	for _, p := range Seccomp() {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Result is the outcome of installing (or removing) one profile on one node.
type Result struct {
	Node    string
	Profile string
	Err     error
}

// Installer puts profile files on nodes.
type Installer interface {
	Install(ctx context.Context, node string, p Profile) error
	Remove(ctx context.Context, node string, name string) error
}

// DockerExec runs a command of the Docker CLI (clusters.Docker has this shape).
type DockerExec func(ctx context.Context, args ...string) (string, error)

// KindInstaller writes profiles into kind node containers with docker exec;
// node containers are named like the Kubernetes nodes.
type KindInstaller struct {
	Docker DockerExec
	// KubeletRoot is the kubelet --root-dir; DefaultKubeletRoot when empty.
	KubeletRoot string
}

func (k KindInstaller) root() string {
	if k.KubeletRoot == "" {
		return DefaultKubeletRoot
	}
	return k.KubeletRoot
}

// Path is where a profile lives on a node.
func (k KindInstaller) Path(name string) string { return path.Join(k.root(), "seccomp", name) }

func checkName(name string) error {
	if name == "" || path.IsAbs(name) || strings.Contains(name, "..") {
		return fmt.Errorf("profile name %q must be a relative path without '..'", name)
	}
	return nil
}

// Install writes one profile on one node.
func (k KindInstaller) Install(ctx context.Context, node string, p Profile) error {
	if err := checkName(p.Name); err != nil {
		return err
	}
	_, err := k.Docker(ctx, "exec", node, "sh", "-c", `mkdir -p "$(dirname "$1")" && printf '%s' "$2" > "$1.tmp" && mv "$1.tmp" "$1"`,
		"sh", k.Path(p.Name), string(p.Content))
	if err != nil {
		return fmt.Errorf("installing seccomp profile %s on node %s: %w", p.Name, node, err)
	}
	return nil
}

// Remove deletes one profile from one node (no error if it is absent).
func (k KindInstaller) Remove(ctx context.Context, node, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if _, err := k.Docker(ctx, "exec", node, "rm", "-f", k.Path(name)); err != nil {
		return fmt.Errorf("removing seccomp profile %s from node %s: %w", name, node, err)
	}
	return nil
}

// InstallAll installs every profile on every node, nodes in parallel, and
// returns one result per node and profile (sorted by node, then profile).
func InstallAll(ctx context.Context, in Installer, nodes []string, ps []Profile) []Result {
	var (
		mu  sync.Mutex
		out []Result
		wg  sync.WaitGroup
	)
	for _, n := range nodes {
		wg.Add(1)
		go func(n string) {
			defer wg.Done()
			for _, p := range ps {
				err := in.Install(ctx, n, p)
				mu.Lock()
				out = append(out, Result{Node: n, Profile: p.Name, Err: err})
				mu.Unlock()
			}
		}(n)
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Profile < out[j].Profile
	})
	return out
}

// FirstError returns the first failed result as an error, or nil.
func FirstError(rs []Result) error {
	for _, r := range rs {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}
