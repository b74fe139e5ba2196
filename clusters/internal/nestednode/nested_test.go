//go:build integration

package nestednode

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/fake"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/api/apitest"
)

// EnvNestedNode is set (to "1") by the outer test when it runs this binary
// in the nested node.
const EnvNestedNode = "SKEWPROOF_NESTED_NODE"

const (
	containerdSocket = "unix:///run/containerd/containerd.sock"
	// containerdDefaultProfile is the profile containerd's CRI generates
	// and loads for RuntimeDefault (containerd pkg/cri, defaultApparmorProfile).
	containerdDefaultProfile = "cri-containerd.apparmor.d"
	kernelProfiles           = agent.DefaultAppArmorFS + "/profiles"
	namespace                = "skewproof-nested"
	nodeName                 = "nested"
)

// TestInNestedNode: the node agent's code loads the AppArmor fixtures into
// the kernel from inside the node; the node's containerd, through its CRI,
// confines a RuntimeDefault container with its own default profile and a
// Localhost container with the fixture (each shown by what it denies);
// deleting the fixture's object makes the agent unload it, so the kernel
// lists no fixture afterwards.
func TestInNestedNode(t *testing.T) {
	if os.Getenv(EnvNestedNode) != "1" {
		t.Skip("runs inside the nested node of clusters.TestIntegrationAppArmorHost, which sets " + EnvNestedNode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	fixtures := profiles.AppArmorFixtureManifests()
	if len(fixtures) == 0 {
		t.Fatal("no AppArmor fixtures")
	}
	var objs []*api.AppArmorProfile
	for _, f := range fixtures {
		objs = append(objs, &api.AppArmorProfile{
			ObjectMeta: metav1.ObjectMeta{Name: f.Name, Namespace: namespace, UID: types.UID("uid-" + f.Name), Generation: 1},
			Spec:       api.AppArmorProfileSpec{Policy: f.Content},
		})
	}
	dyn := apitest.NewDynamic(t, toRuntime(objs)...)
	a, err := agent.New(agent.Config{Node: nodeName, Namespace: namespace, SeccompRoot: t.TempDir(), Dynamic: dyn, Core: fake.NewSimpleClientset()})
	if err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(ctx)
	defer stop()
	if err := a.Start(actx); err != nil {
		t.Fatal(err)
	}

	t.Run("the agent loads the fixtures into the kernel", func(t *testing.T) {
		if err := a.Sync(ctx); err != nil {
			t.Fatalf("agent sync: %v", err)
		}
		for _, f := range fixtures {
			st := nodeStatus(ctx, t, dyn, f.Name)
			if st.Status != api.Installed {
				t.Errorf("fixture %s: node status %s %q, want Installed", f.Name, st.Status, st.Message)
			}
			if mode := loadedMode(t, f.Name); mode != "enforce" {
				t.Errorf("fixture %s: kernel lists it as %q, want enforce", f.Name, mode)
			}
		}
	})
	// containerd is checked even when the agent failed: each half says
	// what it found.

	t.Run("containerd confines CRI containers", func(t *testing.T) {
		conn, err := grpc.NewClient(containerdSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		// Closed after the containers' and the sandbox's clean-ups (which
		// are registered later, so run first).
		t.Cleanup(func() { _ = conn.Close() })
		cri := runtimeapi.NewRuntimeServiceClient(conn)
		sb := runSandbox(ctx, t, cri)

		// RuntimeDefault: containerd's profile, loaded by containerd into
		// the kernel. Its effect: "deny mount," (the container has
		// CAP_SYS_ADMIN and no seccomp filter, so only AppArmor refuses).
		def := startContainer(ctx, t, cri, sb, "runtime-default", &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, "runtime/default")
		if got := execIn(ctx, t, cri, def, "cat", "/proc/self/attr/current"); strings.TrimSpace(got.out) != containerdDefaultProfile+" (enforce)" || got.code != 0 {
			t.Errorf("RuntimeDefault container: /proc/self/attr/current %q (exit %d, %s), want %q", got.out, got.code, got.err, containerdDefaultProfile+" (enforce)")
		}
		if got := execIn(ctx, t, cri, def, "mount", "-t", "tmpfs", "none", "/tmp"); got.code == 0 || !strings.Contains(got.err, "denied") {
			t.Errorf("RuntimeDefault container: mount exit %d (%q), want it denied by %s", got.code, got.err, containerdDefaultProfile)
		}
		if got := execIn(ctx, t, cri, def, "sh", "-c", "echo x > /tmp/skewproof-written"); got.code != 0 {
			t.Errorf("RuntimeDefault container: writing /tmp failed (exit %d, %s); the control write must succeed", got.code, got.err)
		}
		if mode := loadedMode(t, containerdDefaultProfile); mode != "enforce" {
			t.Errorf("the kernel lists %s as %q, want enforce (containerd loads it into the host's kernel)", containerdDefaultProfile, mode)
		}

		// Localhost: the fixture the agent loaded; its effect: writes fail.
		name := names.AppArmorLocalhostProfile
		loc := startContainer(ctx, t, cri, sb, "localhost", &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: name}, "localhost/"+name)
		if got := execIn(ctx, t, cri, loc, "cat", "/proc/self/attr/current"); strings.TrimSpace(got.out) != name+" (enforce)" || got.code != 0 {
			t.Errorf("Localhost container: /proc/self/attr/current %q (exit %d, %s), want %q", got.out, got.code, got.err, name+" (enforce)")
		}
		if got := execIn(ctx, t, cri, loc, "sh", "-c", "echo x > /tmp/skewproof-written"); got.code == 0 || !strings.Contains(got.err, "denied") {
			t.Errorf("Localhost container: writing /tmp exit %d (%q), want it denied by %s", got.code, got.err, name)
		}
	})

	t.Run("deleting the fixtures unloads them", func(t *testing.T) {
		for _, f := range fixtures {
			if err := dyn.Resource(api.AppArmorProfiles).Namespace(namespace).Delete(ctx, f.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The agent's sweep unloads what its objects no longer ask for,
		// once its informer has seen the deletions.
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := a.Sync(ctx); err != nil {
				return false, err
			}
			for _, f := range fixtures {
				if loadedMode(t, f.Name) != "" {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			b, _ := os.ReadFile(kernelProfiles)
			t.Fatalf("fixtures still loaded after their objects were deleted (%v); kernel lists:\n%s", err, b)
		}
	})
}

func toRuntime(objs []*api.AppArmorProfile) []runtime.Object {
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, o)
	}
	return out
}

// loadedMode is the mode the kernel lists a profile in, "" when it is not
// loaded.
func loadedMode(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(kernelProfiles)
	if err != nil {
		t.Fatalf("reading the kernel's profiles: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if n, mode, ok := strings.Cut(strings.TrimSpace(l), " ("); ok && n == name {
			return strings.TrimSuffix(mode, ")")
		}
	}
	return ""
}

func nodeStatus(ctx context.Context, t *testing.T, dyn dynamic.Interface, profile string) api.ProfileNodeStatus {
	t.Helper()
	l, err := dyn.Resource(api.ProfileNodeStatuses).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range l.Items {
		var st api.ProfileNodeStatus
		if err := api.FromUnstructured(&u, &st); err != nil {
			t.Fatal(err)
		}
		if st.ProfileName == profile && st.NodeName == nodeName {
			return st
		}
	}
	t.Fatalf("no node status of %s", profile)
	return api.ProfileNodeStatus{}
}

func runSandbox(ctx context.Context, t *testing.T, cri runtimeapi.RuntimeServiceClient) *sandbox {
	t.Helper()
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "apparmor-host", Uid: fmt.Sprintf("skewproof-apparmor-host-%d", os.Getpid()), Namespace: namespace},
		LogDirectory: "/var/log/skewproof-nested",
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: "skewproof-nested.slice",
			// The nested node has no CNI configuration: the pod uses the
			// node's network.
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}},
		},
	}
	r, err := cri.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	t.Cleanup(func() {
		c := context.Background()
		if _, err := cri.StopPodSandbox(c, &runtimeapi.StopPodSandboxRequest{PodSandboxId: r.PodSandboxId}); err != nil {
			t.Logf("StopPodSandbox: %v", err)
		}
		if _, err := cri.RemovePodSandbox(c, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: r.PodSandboxId}); err != nil {
			t.Logf("RemovePodSandbox: %v", err)
		}
	})
	return &sandbox{id: r.PodSandboxId, cfg: cfg}
}

type sandbox struct {
	id  string
	cfg *runtimeapi.PodSandboxConfig
}

// startContainer starts a busybox container of the sandbox with the
// AppArmor profile as the kubelet asks for it (the field and the
// deprecated string), CAP_SYS_ADMIN and no seccomp filter.
func startContainer(ctx context.Context, t *testing.T, cri runtimeapi.RuntimeServiceClient, sb *sandbox, name string, profile *runtimeapi.SecurityProfile, deprecated string) string {
	t.Helper()
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: nodefacts.BusyBoxImage},
		Command:  []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"},
		LogPath:  name + ".log",
		Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
			Apparmor: profile,
			// The kubelet sets the deprecated string too (v1.37.2
			// pkg/kubelet/kuberuntime/security_context.go,
			// determineEffectiveSecurityContext).
			ApparmorProfile:  deprecated, //nolint:staticcheck // SA1019: as the kubelet sends it
			Capabilities:     &runtimeapi.Capability{AddCapabilities: []string{"SYS_ADMIN"}},
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	r, err := cri.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.id, Config: cfg, SandboxConfig: sb.cfg})
	if err != nil {
		t.Fatalf("CreateContainer %s (AppArmor %s): %v", name, deprecated, err)
	}
	t.Cleanup(func() {
		c := context.Background()
		if _, err := cri.StopContainer(c, &runtimeapi.StopContainerRequest{ContainerId: r.ContainerId, Timeout: 5}); err != nil {
			t.Logf("StopContainer %s: %v", name, err)
		}
		if _, err := cri.RemoveContainer(c, &runtimeapi.RemoveContainerRequest{ContainerId: r.ContainerId}); err != nil {
			t.Logf("RemoveContainer %s: %v", name, err)
		}
	})
	if _, err := cri.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: r.ContainerId}); err != nil {
		t.Fatalf("StartContainer %s: %v", name, err)
	}
	return r.ContainerId
}

type execResult struct {
	out, err string
	code     int32
}

func execIn(ctx context.Context, t *testing.T, cri runtimeapi.RuntimeServiceClient, id string, cmd ...string) execResult {
	t.Helper()
	r, err := cri.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: 30})
	if err != nil {
		t.Fatalf("ExecSync %s: %v", strings.Join(cmd, " "), err)
	}
	res := execResult{out: string(r.Stdout), err: strings.TrimSpace(string(r.Stderr)), code: r.ExitCode}
	t.Logf("%s: exit %d, stdout %q, stderr %q", strings.Join(cmd, " "), res.code, strings.TrimSpace(res.out), res.err)
	return res
}
