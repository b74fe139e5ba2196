package uml

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckConfig(t *testing.T) {
	dot := filepath.Join(t.TempDir(), ".config")
	os.WriteFile(dot, []byte("CONFIG_A=y\nCONFIG_LSM=\"apparmor\"\n# CONFIG_C is not set\nCONFIG_D=y\n"), 0o644)
	ok := "CONFIG_A=y\nCONFIG_LSM=\"apparmor\"\n# CONFIG_C is not set\n# CONFIG_GONE is not set\n# a comment\n"
	if err := checkConfig(dot, []byte(ok)); err != nil {
		t.Errorf("a fragment that holds: %v", err)
	}
	err := checkConfig(dot, []byte("CONFIG_A=y\nCONFIG_B=y\n# CONFIG_D is not set\n"))
	if err == nil || !strings.Contains(err.Error(), "CONFIG_B=unset (wanted y)") || !strings.Contains(err.Error(), "CONFIG_D=y (wanted unset)") {
		t.Errorf("a fragment that does not hold: %v", err)
	}
}

// The checked-in fragment builds a kernel without modules, with AppArmor
// as the default LSM, the vector network driver and SMP.
func TestKernelConfigFragment(t *testing.T) {
	for _, want := range []string{"# CONFIG_MODULES is not set", "CONFIG_SECURITY_APPARMOR=y", "CONFIG_UML_NET_VECTOR=y", "CONFIG_SMP=y", "CONFIG_IP_NF_IPTABLES_LEGACY=y", "CONFIG_HOSTFS=y"} {
		if !strings.Contains(string(kernelConfig), want+"\n") {
			t.Errorf("skewproof-uml.config lacks %q", want)
		}
	}
}

func TestFeatureArgs(t *testing.T) {
	if a := (KernelFeatures{}).Args(0); len(a) != 0 {
		t.Errorf("a kernel without seccomp stubs or SMP: %v", a)
	}
	if a := (KernelFeatures{SMP: true}).Args(0); len(a) != 0 {
		t.Errorf("SMP needs the seccomp stubs: %v", a)
	}
	a := strings.Join((KernelFeatures{SMP: true, Seccomp: true}).Args(0), " ")
	if !strings.Contains(a, "seccomp=on") {
		t.Errorf("args %q lack seccomp=on", a)
	}
	if runtime.NumCPU() > 1 && !strings.Contains(a, "ncpus=") {
		t.Errorf("args %q on a host with %d CPUs lack ncpus=", a, runtime.NumCPU())
	}
	// Capped at one (several nodes sharing the host's cores): no ncpus=.
	if a := strings.Join((KernelFeatures{SMP: true, Seccomp: true}).Args(1), " "); a != "seccomp=on" {
		t.Errorf("args for one virtual CPU %q, want seccomp=on", a)
	}
}

func TestCachedKernel(t *testing.T) {
	dir := t.TempDir()
	if k := CachedKernel(dir); k != "" {
		t.Fatalf("empty cache: %q", k)
	}
	other := filepath.Join(dir, "uml", "kernel-7.3.9-1-"+configKey())
	os.MkdirAll(other, 0o755)
	if k := CachedKernel(dir); k != "" {
		t.Fatalf("an incomplete entry is not a kernel: %q", k)
	}
	os.WriteFile(filepath.Join(other, ".complete"), nil, 0o644)
	if k := CachedKernel(dir); k != filepath.Join(other, "linux") {
		t.Errorf("another version's complete build: %q", k)
	}
	stale := filepath.Join(dir, "uml", "kernel-"+SourceVersion+"-000000000000")
	os.MkdirAll(stale, 0o755)
	os.WriteFile(filepath.Join(stale, ".complete"), nil, 0o644)
	if k := CachedKernel(dir); k != filepath.Join(other, "linux") {
		t.Errorf("a build of another configuration is not this kernel: %q", k)
	}
}
