package gobuild

import (
	"context"
	"reflect"
	"slices"
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
	withRequire := withReplace
	withRequire.Requires = map[string]string{"k8s.io/api": "v0.37.2"}
	if s.key() == other.key() || s.key() == withReplace.key() || withReplace.key() == withRequire.key() {
		t.Error("the key misses the ldflags, the replaces or the requires")
	}
	withTags := s
	withTags.Tags = "urfave_cli_no_docs netgo"
	if withTags.key() == s.key() {
		t.Error("the key misses the build tags")
	}
}

// go build gets -tags only for a set that has tags.
func TestProgramSetBuildArgs(t *testing.T) {
	s := ProgramSet{LDFlags: "-s -w"}
	if got, want := s.buildArgs(), []string{"build", "-trimpath", "-ldflags", "-s -w"}; !reflect.DeepEqual(got, want) {
		t.Errorf("buildArgs() = %q, want %q", got, want)
	}
	s.Tags = "no_grpc netgo"
	if got, want := s.buildArgs(), []string{"build", "-trimpath", "-ldflags", "-s -w", "-tags", "no_grpc netgo"}; !reflect.DeepEqual(got, want) {
		t.Errorf("buildArgs() = %q, want %q", got, want)
	}
}

// A staging module k8s.io/kubernetes requires gets a require at the
// release besides its replace; one it only replaces (not published for
// every release, e.g. k8s.io/sample-cli-plugin) gets the replace alone.
func TestStagingDirectives(t *testing.T) {
	gomod := `module k8s.io/kubernetes

require (
	github.com/blang/semver/v4 v4.0.0
	k8s.io/api v0.0.0
	k8s.io/klog/v2 v2.140.0
)

require (
	k8s.io/kms v0.0.0 // indirect
)

require k8s.io/cri-api v0.0.0

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/cri-api => ./staging/src/k8s.io/cri-api
	k8s.io/kms => ./staging/src/k8s.io/kms
	k8s.io/sample-cli-plugin => ./staging/src/k8s.io/sample-cli-plugin
)
`
	reps, reqs, err := stagingDirectives([]byte(gomod), "v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	wantReps := map[string]string{"k8s.io/api": "v0.37.2", "k8s.io/cri-api": "v0.37.2", "k8s.io/kms": "v0.37.2", "k8s.io/sample-cli-plugin": "v0.37.2"}
	wantReqs := map[string]string{"k8s.io/api": "v0.37.2", "k8s.io/cri-api": "v0.37.2", "k8s.io/kms": "v0.37.2"}
	if !reflect.DeepEqual(reps, wantReps) {
		t.Errorf("replaces %v, want %v", reps, wantReps)
	}
	if !reflect.DeepEqual(reqs, wantReqs) {
		t.Errorf("requires %v, want %v", reqs, wantReqs)
	}
}

// Kubernetes' commands come from one go build; a set whose binary name is
// not go build's name for its package (etcd from .../server/v3) does not.
func TestOneBuild(t *testing.T) {
	k8s := ProgramSet{Programs: map[string]string{"kubelet": "k8s.io/kubernetes/cmd/kubelet", "kubeadm": "k8s.io/kubernetes/cmd/kubeadm"}}
	names, pkgs, ok := k8s.oneBuild()
	if !ok || !reflect.DeepEqual(names, []string{"kubeadm", "kubelet"}) || !reflect.DeepEqual(pkgs, []string{"k8s.io/kubernetes/cmd/kubeadm", "k8s.io/kubernetes/cmd/kubelet"}) {
		t.Errorf("oneBuild() = %v %v %v", names, pkgs, ok)
	}
	for _, s := range []ProgramSet{
		{Programs: map[string]string{"kubelet": "k8s.io/kubernetes/cmd/kubelet"}},
		{Programs: map[string]string{"etcd": "go.etcd.io/etcd/server/v3", "etcdctl": "go.etcd.io/etcd/etcdctl/v3"}},
		{Programs: map[string]string{"v3": "example.com/x/v3", "y": "example.com/y"}},
	} {
		if _, _, ok := s.oneBuild(); ok {
			t.Errorf("oneBuild() of %v: true", s.Programs)
		}
	}
}

func TestNearestServedStaging(t *testing.T) {
	served := map[string]bool{
		"k8s.io/api@v0.26.15":        true,
		"k8s.io/kube-proxy@v0.26.9":  true,
		"k8s.io/kube-proxy@v0.26.1":  true,
		"k8s.io/sample-cli@v0.26.15": false,
	}
	var asked []string
	old := moduleServed
	moduleServed = func(_ context.Context, m, v string) (bool, error) {
		asked = append(asked, m+"@"+v)
		return served[m+"@"+v], nil
	}
	t.Cleanup(func() { moduleServed = old })

	reps := map[string]string{"k8s.io/api": "v0.26.15", "k8s.io/kube-proxy": "v0.26.15", "k8s.io/sample-cli": "v0.26.15"}
	reqs := map[string]string{"k8s.io/api": "v0.26.15", "k8s.io/kube-proxy": "v0.26.15"}
	lines, err := nearestServedStaging(context.Background(), reps, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if reqs["k8s.io/kube-proxy"] != "v0.26.9" || reps["k8s.io/kube-proxy"] != "v0.26.9" || reqs["k8s.io/api"] != "v0.26.15" {
		t.Errorf("requires %v, replaces %v; want kube-proxy at v0.26.9 in both, api unchanged", reqs, reps)
	}
	if reps["k8s.io/sample-cli"] != "v0.26.15" {
		t.Errorf("a module the build does not require was changed: %v", reps)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "k8s.io/kube-proxy v0.26.15 is not served") || !strings.Contains(lines[0], "v0.26.9") {
		t.Errorf("lines = %q", lines)
	}
	if slices.Contains(asked, "k8s.io/sample-cli@v0.26.15") {
		t.Errorf("asked about a module the build does not require: %v", asked)
	}

	reqs = map[string]string{"k8s.io/gone": "v0.26.2"}
	if _, err := nearestServedStaging(context.Background(), map[string]string{"k8s.io/gone": "v0.26.2"}, reqs); err == nil || !strings.Contains(err.Error(), "k8s.io/gone at no patch of v0.26") {
		t.Errorf("no served patch: %v", err)
	}
}
