package gobuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// notInKubernetesCommands are modules whose versions may differ from
// k8s.io/kubernetes's go.mod because no package the project compiles from
// them is compiled by a Kubernetes command (kube-apiserver, kubelet, ...):
// test frameworks, x/mod, go-md2man, and x/tools, whose go/packages the project
// links while the kubelet links only container/intsets (go list -deps of
// the commands in the node-image build's wrapper module shows which).
var notInKubernetesCommands = map[string]string{
	"github.com/onsi/ginkgo/v2": "test framework; only test/e2e links it",
	"github.com/onsi/gomega":    "test framework; only test/e2e links it",
	"golang.org/x/tools":        "the project links go/packages, the commands only container/intsets",
	"golang.org/x/mod":          "no Kubernetes command links it",
	// cobra/doc's; in k8s.io/kubernetes only the doc generators
	// (cmd/genman, cmd/gendocs, cmd/genkubedocs) import it, and no node
	// image builds them.
	"github.com/cpuguy83/go-md2man/v2": "only the CLI reference's test links it (cobra/doc); no Kubernetes command a node image builds",
}

// make build compiles with -trimpath, as the node images' Kubernetes
// builds do, so the packages both compile (k8s.io/api, client-go,
// apiserver, most of k8s.io/kubernetes/pkg...) are compiled once if every
// module they come from, and all below them, is at the same version: a
// cold make conformance then compiles the control plane of go.mod's
// Kubernetes release (the default) on top of the project's build. This
// fails when a dependency update moves a module both compile away from
// k8s.io/kubernetes's go.mod (each such module recompiles everything above
// it); pin it back (go get module@version) or, if no Kubernetes command
// compiles it, list it above with the reason.
func TestProjectSharesKubernetesDependencies(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := filepath.Join("..", "..", "..")
	list := exec.Command("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./cmd/skewproof", "./cmd/launcher", "./suites/e2e")
	list.Dir = root
	list.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	compiled := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			compiled[f[0]] = f[1]
		}
	}
	k8s, ok := compiled["k8s.io/kubernetes"]
	if !ok {
		t.Fatal("the project compiles no package of k8s.io/kubernetes")
	}
	dir, err := ModuleDir(context.Background(), "k8s.io/kubernetes", k8s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	staging, _, err := stagingDirectives(raw, k8s)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range f.Require {
		want := r.Mod.Version
		if release, ok := staging[r.Mod.Path]; ok {
			want = release // a staging module, replaced by its release
		}
		got, ok := compiled[r.Mod.Path]
		if !ok {
			continue
		}
		checked++
		if got != want {
			if why, ok := notInKubernetesCommands[r.Mod.Path]; ok {
				t.Logf("%s %s (k8s.io/kubernetes %s has %s): %s", r.Mod.Path, got, k8s, want, why)
				continue
			}
			t.Errorf("the project compiles %s %s; k8s.io/kubernetes %s requires %s", r.Mod.Path, got, k8s, want)
		}
	}
	if checked < 50 {
		t.Errorf("only %d modules checked: go.mod of k8s.io/kubernetes %s not read as expected", checked, k8s)
	}
	t.Logf("%d modules the project compiles checked against k8s.io/kubernetes %s", checked, k8s)
}
