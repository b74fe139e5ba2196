package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An OCI runtime of the user's may run on the AppArmor node alone: naming
// it in --apparmor-node is enough; naming it nowhere is refused.
func TestOCIRuntimeOnTheAppArmorNodeAlone(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "noaa")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec runc \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	oci := []string{"noaa=" + bin}
	if _, err := parseWorkers([]string{"1.37.2"}, oci, "", "1.37.2+noaa"); err != nil {
		t.Errorf("--apparmor-node 1.37.2+noaa --oci-runtime noaa=…: %v", err)
	}
	if _, err := parseWorkers([]string{"1.37.2"}, oci, "", ""); err == nil || !strings.Contains(err.Error(), "--apparmor-node") {
		t.Errorf("--oci-runtime noaa named nowhere: %v, want a refusal naming the places to name it", err)
	}
}
