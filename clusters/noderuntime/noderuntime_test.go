package noderuntime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseWorker(t *testing.T) {
	vendor := map[string]string{"myrt": "/opt/myrt"}
	for in, want := range map[string]Worker{
		"1.37.2":                 {Kubelet: "1.37.2"},
		"v1.34.4+crun":           {Kubelet: "v1.34.4", Runtime: Runtime{OCI: OCICrun}},
		"1.37.2@containerd":      {Kubelet: "1.37.2", Runtime: Runtime{CRI: CRIContainerd}},
		"1.37.2@containerd+runc": {Kubelet: "1.37.2", Runtime: Runtime{CRI: CRIContainerd, OCI: OCIRunc}},
		"1.37.2+myrt":            {Kubelet: "1.37.2", Runtime: Runtime{OCI: "myrt"}},
		"1.37.2@crio+crun":       {Kubelet: "1.37.2", Runtime: Runtime{CRI: CRICRIO, OCI: OCICrun}},
		"1.37.2@cri-o":           {Kubelet: "1.37.2", Runtime: Runtime{CRI: CRICRIO}},
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
	if got := (Worker{Kubelet: "v1.37.2", Runtime: Runtime{CRI: CRIContainerd, OCI: OCICrun}}).String(); got != "1.37.2+crun" {
		t.Errorf("Worker.String() = %q", got)
	}
	if !(Runtime{CRI: CRIContainerd, OCI: OCIRunc}).IsDefault() || (Runtime{OCI: OCICrun}).IsDefault() {
		t.Error("IsDefault wrong")
	}
}

func TestParseVendorOCI(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "myrt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if name, path, err := ParseVendorOCI("myrt=" + exe); err != nil || name != "myrt" || path != exe {
		t.Errorf("ParseVendorOCI = %q, %q, %v", name, path, err)
	}
	for in, msg := range map[string]string{
		"myrt":                  "the form is NAME=PATH",
		"My_RT=" + exe:          "lower-case letters",
		"crun=" + exe:           "the node images carry",
		"x=" + plain:            "not an executable file",
		"x=" + dir + "/missing": "no such file",
		"x=" + dir:              "not an executable file",
	} {
		if _, _, err := ParseVendorOCI(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseVendorOCI(%q) error %v, want one containing %q", in, err, msg)
		}
	}
}
