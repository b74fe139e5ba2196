// Dependencies of old releases that the build takes from elsewhere than
// their go.mod says, because the Go module proxy no longer serves them
// where they were published; each with the reason.

package gobuild

import (
	"fmt"
	"strings"

	"golang.org/x/mod/modfile"
)

// dependencyFix is a dependency of a Kubernetes release that the build
// takes from another module path or at another version than the release's
// go.mod names.
type dependencyFix struct {
	Module   string // the module the release requires
	To       string // the module path the source is taken from; "" for Module itself
	Version  string // the version taken
	Releases string // the releases that need it (documentation; docs/clusters/README.md)
	Reason   string
}

// replace is the right-hand side of the fix's replace directive
// (ProgramSet.Replaces).
func (f dependencyFix) replace() string {
	if f.To == "" || f.To == f.Module {
		return f.Version
	}
	return f.To + " " + f.Version
}

// kubernetesDependencyFixes apply to every release whose go.mod names
// Module (in a require or a replace directive) at another module or
// version than the fix's.
var kubernetesDependencyFixes = []dependencyFix{{
	// k8s.io/kubectl v0.19.x imports vbom.ml/util/sortorder; v1.20 moved to
	// github.com/fvbommel/sortorder.
	Module:   "vbom.ml/util",
	To:       "github.com/fvbommel/util",
	Version:  "v0.0.0-20160121211510-db5cfe13f5cc",
	Releases: "v1.19",
	Reason: "vbom.ml is its author's vanity import path, no longer resolvable; the Go module proxy refuses " +
		"vbom.ml/util (403) and serves the same commit, db5cfe13f5cc, as github.com/fvbommel/util, the repository the vanity path pointed at",
}, {
	// json-iterator's reflect2 v1.0.1 declares reflect.mapiterinit (by
	// go:linkname) with the signature it had before Go 1.18, which
	// allocated the iterator itself; from Go 1.18 on the caller passes it
	// in, so a v1.0.1 build encodes every map through a wild pointer (the
	// API server crashes). v1.0.2 is its one change: the Go 1.18
	// signature. Kubernetes v1.23 requires it.
	Module:   "github.com/modern-go/reflect2",
	Version:  "v1.0.2",
	Releases: "v1.19-v1.22",
	Reason: "v1.0.1 links reflect.mapiterinit with its signature before Go 1.18 and crashes on maps when built with a newer Go; " +
		"v1.0.2, the next patch, has the Go 1.18 signature",
}}

// dependencyFixes are the fixes of kubernetesDependencyFixes that apply to
// the release whose go.mod is gomod.
func dependencyFixes(gomod []byte) ([]dependencyFix, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, err
	}
	// named: module path -> the module and version the release takes,
	// a replace directive's over a require's.
	named := map[string]string{}
	for _, r := range f.Require {
		named[r.Mod.Path] = r.Mod.Path + " " + r.Mod.Version
	}
	for _, r := range f.Replace {
		if r.New.Version != "" {
			named[r.Old.Path] = r.New.Path + " " + r.New.Version
		}
	}
	var fixes []dependencyFix
	for _, fix := range kubernetesDependencyFixes {
		if took, ok := named[fix.Module]; ok && took != replaceTarget(fix.Module, fix.replace()) {
			fixes = append(fixes, fix)
		}
	}
	return fixes, nil
}

// replaceTarget is the right-hand side of the replace directive of module m
// for ProgramSet.Replaces value v: v itself when it names a module path
// ("path version"), m at version v otherwise.
func replaceTarget(m, v string) string {
	if strings.Contains(v, " ") {
		return v
	}
	return m + " " + v
}

// describe is the progress line of a fix applied to release v.
func (f dependencyFix) describe(v string) string {
	return fmt.Sprintf("k8s.io/kubernetes %s: %s taken as %s (%s)", v, f.Module, f.replace(), f.Reason)
}
