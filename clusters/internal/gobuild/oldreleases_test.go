package gobuild

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A fix applies to a release whose go.mod names the module at another
// module or version than the fix's: v1.19's vbom.ml/util and reflect2
// v1.0.1 (pinned by replace directives), not v1.23's reflect2 v1.0.2.
func TestDependencyFixes(t *testing.T) {
	v119 := `module k8s.io/kubernetes

require (
	github.com/json-iterator/go v1.1.10
	k8s.io/api v0.0.0
)

replace (
	github.com/modern-go/reflect2 => github.com/modern-go/reflect2 v1.0.1
	k8s.io/api => ./staging/src/k8s.io/api
	vbom.ml/util => vbom.ml/util v0.0.0-20160121211510-db5cfe13f5cc
)
`
	v123 := `module k8s.io/kubernetes

require (
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
)
`
	names := func(gomod string) []string {
		fs, err := dependencyFixes([]byte(gomod))
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, f := range fs {
			ns = append(ns, f.Module+" => "+f.replace())
		}
		return ns
	}
	if got, want := names(v119), []string{
		"vbom.ml/util => github.com/fvbommel/util v0.0.0-20160121211510-db5cfe13f5cc",
		"github.com/modern-go/reflect2 => v1.0.2",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("v1.19 fixes %q, want %q", got, want)
	}
	if got := names(v123); len(got) != 0 {
		t.Errorf("v1.23 fixes %q, want none", got)
	}
	for _, f := range kubernetesDependencyFixes {
		if f.Reason == "" || f.Releases == "" || f.Version == "" {
			t.Errorf("fix of %s lacks its reason, releases or version", f.Module)
		}
	}
}

// A replace value of another module path keeps it; a bare version is the
// module itself at that version.
func TestReplaceTarget(t *testing.T) {
	if got := replaceTarget("k8s.io/api", "v0.26.13"); got != "k8s.io/api v0.26.13" {
		t.Errorf("replaceTarget = %q", got)
	}
	if got := replaceTarget("vbom.ml/util", "github.com/fvbommel/util v0.0.0-1"); got != "github.com/fvbommel/util v0.0.0-1" {
		t.Errorf("replaceTarget = %q", got)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The packages that ask for OpenAPI definitions are found as the make rule
// found them: a "// +k8s:" tag in column 0 and "+k8s:openapi-gen=" in one
// file; top-level _*, .* and vendor are not looked at.
func TestOpenAPIPackages(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"pkg/apis/a/v1/doc.go":        "// +k8s:openapi-gen=true\npackage v1\n",
		"pkg/apis/a/v1/types.go":      "package v1\n",
		"pkg/apis/b/v1/doc.go":        "// +k8s:deepcopy-gen=package\n\npackage v1\n\n// +k8s:openapi-gen=false\ntype T struct{}\n",
		"pkg/apis/c/doc.go":           "// +k8s:deepcopy-gen=package\npackage c\n",
		"pkg/apis/d/doc.go":           "/*\n +k8s:openapi-gen=true\n*/\npackage d\n",
		"_output/x/doc.go":            "// +k8s:openapi-gen=true\npackage x\n",
		"vendor/y/doc.go":             "// +k8s:openapi-gen=true\npackage y\n",
		"pkg/apis/a/v1/testdata/x.go": "// +k8s:openapi-gen=true\npackage x\n",
	})
	got, err := openAPIPackages("k8s.io/m", dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"k8s.io/m/pkg/apis/a/v1", "k8s.io/m/pkg/apis/a/v1/testdata", "k8s.io/m/pkg/apis/b/v1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("openAPIPackages = %q, want %q", got, want)
	}
}

// The violations openapi-gen reports must be the release's known list,
// order aside.
func TestSameLines(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "x\ny\n", "b": "y\nx\n\n", "c": "x\n"})
	if err := sameLines(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Errorf("same lines: %v", err)
	}
	if err := sameLines(filepath.Join(dir, "a"), filepath.Join(dir, "c")); err == nil || !strings.Contains(err.Error(), `"y"`) {
		t.Errorf("a differing line: %v", err)
	}
}

// The linked tree holds every file of the source, and a file added to it
// is not added to the source.
func TestLinkTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	writeFiles(t, src, map[string]string{"go.mod": "module m\n", "pkg/generated/openapi/doc.go": "package openapi\n"})
	if err := linkTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "pkg/generated/openapi/doc.go")); err != nil || string(b) != "package openapi\n" {
		t.Fatalf("linked file: %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(dst, openAPIFile), []byte("package openapi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !needsOpenAPI(src) || needsOpenAPI(dst) {
		t.Errorf("needsOpenAPI: source %v, tree %v", needsOpenAPI(src), needsOpenAPI(dst))
	}
}

// The key changes when the definitions are generated.
func TestProgramSetKeyOpenAPI(t *testing.T) {
	s := ProgramSet{Module: "k8s.io/kubernetes", Version: "v1.19.16"}
	g := s
	g.KubernetesOpenAPI = true
	if s.key() == g.key() {
		t.Error("the key misses the generated definitions")
	}
}
