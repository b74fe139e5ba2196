package clusters

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
	"github.com/skewproof/skewproof/internal/nodefacts"
)

func TestParseWorker(t *testing.T) {
	vendor := map[string]string{"myrt": "/opt/myrt"}
	for in, want := range map[string]Worker{
		"1.37.2":                 {Kubelet: "1.37.2"},
		"v1.34.4+crun":           {Kubelet: "v1.34.4", Runtime: NodeRuntime{OCI: nodeimage.OCICrun}},
		"1.37.2@containerd":      {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: nodeimage.CRIContainerd}},
		"1.37.2@containerd+runc": {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: nodeimage.CRIContainerd, OCI: nodeimage.OCIRunc}},
		"1.37.2+myrt":            {Kubelet: "1.37.2", Runtime: NodeRuntime{OCI: "myrt"}},
		"1.37.2@crio+crun":       {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: nodeimage.CRICRIO, OCI: nodeimage.OCICrun}},
		"1.37.2@cri-o":           {Kubelet: "1.37.2", Runtime: NodeRuntime{CRI: nodeimage.CRICRIO}},
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
	if got := (Worker{Kubelet: "v1.37.2", Runtime: NodeRuntime{CRI: nodeimage.CRIContainerd, OCI: nodeimage.OCICrun}}).String(); got != "1.37.2+crun" {
		t.Errorf("Worker.String() = %q", got)
	}
	if !(NodeRuntime{CRI: nodeimage.CRIContainerd, OCI: nodeimage.OCIRunc}).IsDefault() || (NodeRuntime{OCI: nodeimage.OCICrun}).IsDefault() {
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

// A user's OCI runtime that a worker runs gets a RuntimeClass of its name,

// scheduled onto the nodes labelled with it; the node images' own do not.

func TestCreateOCIRuntimeClasses(t *testing.T) {
	cs := fake.NewSimpleClientset()
	o := UpOptions{Kubelets: []string{"1.37.2", "1.37.2", "1.36.3"},
		Runtimes:    []NodeRuntime{{OCI: "crun"}, {OCI: "mine"}, {CRI: nodeimage.CRIContainerd2, OCI: "mine"}},
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
	if rc.Name != "mine" || rc.Handler != "mine" || rc.Scheduling == nil || rc.Scheduling.NodeSelector[nodefacts.OCIRuntimeLabel] != "mine" {
		t.Errorf("RuntimeClass %+v", rc)
	}
}
