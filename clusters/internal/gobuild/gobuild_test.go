package gobuild

import (
	"strings"
	"testing"
)

func TestKubernetesLDFlagsStampVersion(t *testing.T) {
	f := kubernetesLDFlags("1.34.4")
	for _, want := range []string{
		"k8s.io/component-base/version.gitVersion=v1.34.4",
		"k8s.io/component-base/version.gitMinor=34",
		"k8s.io/component-base/version.gitMajor=1",
		"k8s.io/client-go/pkg/version.gitVersion=v1.34.4",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("ldflags %q lack %q", f, want)
		}
	}
}

// The entry's name and key change with every input of the build.
func TestProgramSetKey(t *testing.T) {
	s := ProgramSet{Module: "go.etcd.io/etcd/server/v3", Version: "v3.6.0", Programs: map[string]string{"etcd": "go.etcd.io/etcd/server/v3"}, LDFlags: "-s -w"}
	if !strings.HasPrefix(s.dirName(), "go.etcd.io_etcd_server_v3-v3.6.0-") {
		t.Errorf("dirName %s", s.dirName())
	}
	other := s
	other.LDFlags = "-s"
	withReplace := s
	withReplace.Replaces = map[string]string{"k8s.io/api": "v0.37.2"}
	if s.key() == other.key() || s.key() == withReplace.key() {
		t.Error("the key misses the ldflags or the replaces")
	}
}
