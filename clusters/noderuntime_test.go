package clusters

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/skewproof/skewproof/skew"
)

func TestParseWorker(t *testing.T) {
	vendor := map[string]string{"myrt": "/opt/myrt"}
	for in, want := range map[string]Worker{
		"1.37.2":                 {Kubelet: "1.37.2"},
		"v1.34.4+crun":           {Kubelet: "v1.34.4", Runtime: NodeRuntime{OCI: ociCrun}},
		"1.37.2@containerd":      {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: criContainerd}},
		"1.37.2@containerd+runc": {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: criContainerd, OCI: ociRunc}},
		"1.37.2+myrt":            {Kubelet: "1.37.2", Runtime: NodeRuntime{OCI: "myrt"}},
		"1.37.2@crio+crun":       {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: criCRIO, OCI: ociCrun}},
		"1.37.2@cri-o":           {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: criCRIO}},
	} {
		got, err := ParseWorker(in, vendor)
		if err != nil || got != want {
			t.Errorf("ParseWorker(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"+crun":          "no kubelet version",
		"1.37.2+youki":   `unknown OCI runtime "youki" (known: crun, runc, myrt; give your own with --oci-runtime NAME=PATH)`,
		"1.37.2@dockerd": `unknown CRI runtime "dockerd"`,
	} {
		if _, err := ParseWorker(in, vendor); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseWorker(%q) error %v, want one containing %q", in, err, msg)
		}
	}
	if got := (Worker{Kubelet: "v1.37.2", Runtime: NodeRuntime{CRI: criContainerd, OCI: ociCrun}}).String(); got != "1.37.2+crun" {
		t.Errorf("Worker.String() = %q", got)
	}
	if !(NodeRuntime{CRI: criContainerd, OCI: ociRunc}).IsDefault() || (NodeRuntime{OCI: ociCrun}).IsDefault() {
		t.Error("IsDefault wrong")
	}
}

func TestParseOCIRuntime(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "myrt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if name, path, err := ParseOCIRuntime("myrt=" + exe); err != nil || name != "myrt" || path != exe {
		t.Errorf("ParseOCIRuntime = %q, %q, %v", name, path, err)
	}
	for in, msg := range map[string]string{
		"myrt":                  "the form is NAME=PATH",
		"My_RT=" + exe:          "lower-case letters",
		"crun=" + exe:           "the node images carry",
		"x=" + plain:            "not an executable file",
		"x=" + dir + "/missing": "no such file",
		"x=" + dir:              "not an executable file",
	} {
		if _, _, err := ParseOCIRuntime(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseOCIRuntime(%q) error %v, want one containing %q", in, err, msg)
		}
	}
}

func TestNodeRuntimeInConfigAndImage(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "myrt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec runc \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	vendor := map[string]string{"myrt": exe}
	def, err := resolveOCI(NodeRuntime{}, vendor)
	if err != nil || def.nodePath != nodeRunc || def.hostPath != "" {
		t.Fatalf("default runtime %+v, %v", def, err)
	}
	if c := containerdConfig("p", def); strings.Contains(c, `BinaryName = "`+nodeRunc+`"`) || !strings.Contains(c, "runtimes.runc]\n") {
		t.Error("the default runtime's config names runc's binary (the shim's default)")
	}
	crun, _ := resolveOCI(NodeRuntime{OCI: ociCrun}, vendor)
	c := containerdConfig("p", crun)
	for _, want := range []string{
		"runtimes.runc.options]\n    SystemdCgroup = true\n    BinaryName = \"/usr/bin/crun\"\n",
		"runtimes.crun]\n  runtime_type = \"io.containerd.runc.v2\"",
		"runtimes.crun.options]\n    SystemdCgroup = true\n    BinaryName = \"/usr/bin/crun\"\n",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("containerd config for crun lacks %q:\n%s", want, c)
		}
	}
	if s := restrictedRuntimes[0].script(crun.nodePath); !strings.Contains(s, `exec /usr/bin/crun "$@"`) || !strings.Contains(s, "crun without seccomp") {
		t.Errorf("restricted runtime around crun:\n%s", s)
	}
	mine, err := resolveOCI(NodeRuntime{OCI: "myrt"}, vendor)
	if err != nil || mine.nodePath != vendorOCIDir+"/myrt" || mine.hostPath != exe || len(mine.digest) != 64 {
		t.Fatalf("vendor runtime %+v, %v", mine, err)
	}
	if _, err := resolveOCI(NodeRuntime{OCI: "other"}, vendor); err == nil {
		t.Error("an unknown OCI runtime resolved")
	}

	base := &baseImage{Key: "k"}
	spec := NodeImageSpec{ControlPlane: "1.37.2", Kubelet: "1.37.2"}
	refDefault, _ := nodeImageRef(base, spec, def)
	spec.Runtime = NodeRuntime{OCI: ociCrun}
	if spec.isControlPlane() {
		t.Error("a crun worker at the control plane's version is taken for the control plane")
	}
	refCrun, _ := nodeImageRef(base, spec, crun)
	if !strings.HasPrefix(refCrun, nodeImageRepo+":v1.37.2-kubelet-v1.37.2-containerd-crun-") || refCrun == refDefault {
		t.Errorf("crun image %q (default %q)", refCrun, refDefault)
	}
	// A different binary of the same name is another image.
	spec.Runtime = NodeRuntime{OCI: "myrt"}
	ref1, _ := nodeImageRef(base, spec, mine)
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec crun \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine2, _ := resolveOCI(NodeRuntime{OCI: "myrt"}, vendor)
	if ref2, _ := nodeImageRef(base, spec, mine2); ref2 == ref1 {
		t.Error("a changed vendor binary keeps its node image")
	}
}

func TestVersionLabel(t *testing.T) {
	for in, want := range map[string]string{
		"runc version 1.1.15+ds1\ncommit: 1.1.15+ds1-2+b4\nspec: 1.2.0\n": "1.1.15",
		"crun version 1.21\ncommit: 10269840\n":                           "1.21",
		"":                                                                "unknown",
		"my runtime v0.1~beta/2":                                          "v0.1-beta-2",
		"+":                                                               "unknown",
	} {
		if got := versionLabel(in); got != want {
			t.Errorf("versionLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// A user's OCI runtime that a worker runs gets a RuntimeClass of its name,
// scheduled onto the nodes labelled with it; the node images' own do not.
func TestCreateOCIRuntimeClasses(t *testing.T) {
	cs := fake.NewSimpleClientset()
	o := UpOptions{Kubelets: []string{"1.37.2", "1.37.2", "1.36.3"},
		Runtimes:    []NodeRuntime{{OCI: "crun"}, {OCI: "mine"}, {CRI: criContainerd2, OCI: "mine"}},
		OCIRuntimes: map[string]string{"mine": "/x/mine", "unused": "/x/unused"}}
	if err := createOCIRuntimeClasses(context.Background(), cs, o); err != nil {
		t.Fatal(err)
	}
	list, err := cs.NodeV1().RuntimeClasses().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("RuntimeClasses %+v, want one (mine)", list.Items)
	}
	rc := list.Items[0]
	if rc.Name != "mine" || rc.Handler != "mine" || rc.Scheduling == nil || rc.Scheduling.NodeSelector[skew.OCIRuntimeLabel] != "mine" {
		t.Errorf("RuntimeClass %+v", rc)
	}
}
