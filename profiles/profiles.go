// Package profiles holds the seccomp profile fixtures the suites use and
// puts them on the nodes of a cluster, under the kubelet's seccomp root
// (<kubelet root-dir>/seccomp, KEP-135 §Seccomp root
// path configuration), through the node agent and its per-node status
// objects (the security-profiles-operator scalable-status design): no access to the nodes other
// than through the API is needed.
package profiles

import (
	"embed"
	"sort"

	"github.com/skewproof/skewproof/profiles/api"
)

//go:embed seccomp/*.json
var seccompFiles embed.FS

//go:embed apparmor/*
var appArmorFiles embed.FS

// FixturesNamespace is where the agent that installs the fixtures runs and
// where their SeccompProfile objects live.
const FixturesNamespace = "skewproof-fixtures"

// Dir is the directory, relative to the kubelet's seccomp root, where the
// agent of FixturesNamespace writes the fixtures; a pod's localhostProfile
// is Dir + "/" + file (api.SeccompLocalhostProfile).
const Dir = api.SeccompDir + "/" + FixturesNamespace

// Names of the seccomp profiles, as a pod's localhostProfile.
const (
	// DenyMkdir makes mkdir and mkdirat fail with EPERM; everything else is
	// allowed (names.SeccompLocalhostProfile names the same file).
	DenyMkdir = Dir + "/deny-mkdir.json"
	// DenyExecve makes execve and execveat fail with EPERM, so a container
	// cannot start its process.
	DenyExecve = Dir + "/deny-execve.json"
	// LogMkdir logs mkdir and mkdirat (SCMP_ACT_LOG) and allows them.
	LogMkdir = Dir + "/log-mkdir.json"
	// InvalidAction uses an action no runtime knows.
	InvalidAction = Dir + "/invalid-action.json"
)

// Profile is one seccomp profile file.
type Profile struct {
	// Name is the path relative to the seccomp root, e.g.
	// "skewproof-profiles/skewproof-fixtures/deny-mkdir.json".
	Name    string
	Content []byte
}

// Seccomp returns every seccomp profile of this package, sorted by name.
func Seccomp() []Profile {
	return embedded(seccompFiles, "seccomp", func(file string) string { return Dir + "/" + file })
}

// embedded reads every file of dir in fsys as a Profile named name(file),
// sorted by name.
func embedded(fsys embed.FS, dir string, name func(file string) string) []Profile {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []Profile
	for _, e := range entries {
		b, err := fsys.ReadFile(dir + "/" + e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, Profile{Name: name(e.Name()), Content: b})
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

// AppArmor returns the AppArmor profiles of this package (named after their
// files, which is the profile name they declare), sorted by name.
func AppArmor() []Profile {
	return embedded(appArmorFiles, "apparmor", func(file string) string { return file })
}
