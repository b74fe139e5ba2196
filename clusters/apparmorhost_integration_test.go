//go:build integration

package clusters

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
	"github.com/skewproof/skewproof/clusters/internal/uml"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"
)

// TestIntegrationAppArmorHost runs the AppArmor-host path of kindConfig for
// real. This host's kernel has no AppArmor, so a User-Mode Linux kernel
// that enforces it plays the host: in a UML machine booted from the node
// image (no cluster), the machine's containerd starts a nested kind node —
// a privileged container of the same node image booting its systemd, with
// container=docker as kind sets it — with exactly the extra mounts
// kindConfig gives a worker when the host's facts show AppArmor (the
// host's securityfs and the containerd drop-in). Inside that node
// (clusters/internal/nestednode, run there): the node agent's code loads
// the AppArmor fixtures into the kernel; the node's containerd, asked
// through its CRI, confines a RuntimeDefault container with its own
// profile and a Localhost container with the fixture, each shown by a
// denied operation; deleting the fixtures' objects makes the agent unload
// them. Then, from the UML machine (the "host"), its kernel lists
// containerd's default profile and no fixture.
//
// Run as root (the UML machine's link on a bridge of its own), with the UML
// kernel's build tools (make host-uml). A node image and the kernel are
// built when not cached.
func TestIntegrationAppArmorHost(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	start := time.Now()
	p := progress.New(os.Stderr)
	if err := appArmorNodeReady(""); err != nil {
		t.Fatal(err)
	}
	cache, err := cachedir.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	const version = "1.37.2"
	image, err := nodeimage.Build(ctx, command.Host{Progress: p}, nodeimage.Spec{ControlPlane: version})
	if err != nil {
		t.Fatal(err)
	}

	// What kindConfig gives a worker on a host whose kernel has AppArmor.
	host := nodefacts.Host()
	host.AppArmor = true
	w := noderuntime.Worker{Kubelet: version}
	cfg, err := kindConfig(ctx, command.Host{}, UpOptions{Name: "aah", APIServer: version, Kubelets: []string{version}}, map[noderuntime.Worker]string{{}: image, w: image}, host)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 2 || cfg.Nodes[1].Role != v1alpha4.WorkerRole {
		t.Fatalf("kindConfig: nodes %+v, want a control plane and one worker", cfg.Nodes)
	}
	mounts := cfg.Nodes[1].ExtraMounts
	t.Logf("the worker's extra mounts on an AppArmor host: %+v", mounts)

	var inner string
	var n *uml.Node
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		inner, err = buildNestedTest(gctx, t.TempDir())
		return err
	})
	g.Go(func() (err error) {
		n, err = bootBareUMLNode(gctx, t, p, cache, image)
		return err
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	m := &umlMachine{n: n}
	nn := m.startNestedNode(ctx, t, mounts, inner)
	before := m.kernelProfiles(ctx, t)
	for _, f := range appArmorFixtureNames(t) {
		if strings.Contains(before, f+" (") {
			t.Fatalf("fixture %s is loaded before the test:\n%s", f, before)
		}
	}
	p.Step("running the nested node's test (AppArmor fixtures through the agent, CRI containers)")
	out, err := nn.exec(ctx, "env", "SKEWPROOF_NESTED_NODE=1", nestedTestPath, "-test.v", "-test.count=1", "-test.run", "^TestInNestedNode$")
	t.Logf("in the nested node:\n%s", out)
	if err != nil {
		t.Errorf("the nested node's test: %v", err)
	}
	after := m.kernelProfiles(ctx, t)
	t.Logf("the UML kernel's profiles afterwards:\n%s", after)
	if !strings.Contains(after, "cri-containerd.apparmor.d (enforce)") {
		t.Error("the host's kernel does not list containerd's default profile cri-containerd.apparmor.d (enforce)")
	}
	for _, f := range appArmorFixtureNames(t) {
		if strings.Contains(after, f+" (") {
			t.Errorf("fixture %s is still loaded in the host's kernel", f)
		}
	}
	p.Step("AppArmor host test done in %.0fs", time.Since(start).Seconds())
}

// nestedTestPath is where the nested node's test binary is in that node.
const nestedTestPath = "/skewproof-nested.test"

// buildNestedTest compiles clusters/internal/nestednode's test (static:
// it runs in the node image) into dir.
func buildNestedTest(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "nestednode.test")
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-trimpath", "-ldflags=-s -w", "-tags", "integration", "-o", out, "./internal/nestednode")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the nested node's test: %v: %s", err, b)
	}
	return out, nil
}

// appArmorFixtureNames are the AppArmor fixtures' profile names (files of
// profiles/apparmor, each defines the profile of its name).
func appArmorFixtureNames(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("..", "profiles", "apparmor"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("the AppArmor fixtures: %v", err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// bootBareUMLNode boots a UML machine from image's disk on a bridge of its
// own, with no cluster (it joins nothing; its kubelet is stopped), and
// waits for its exec channel. Its state is under the UML state root, named
// for cluster aah<pid> ('skewproof cluster down --name aah<pid>' removes
// it if the test is killed; the bridge aah<pid>br then too: ip link del).
func bootBareUMLNode(ctx context.Context, t *testing.T, p *progress.Progress, cache, image string) (*uml.Node, error) {
	imageID, err := Docker(ctx, "image", "inspect", "--format", "{{.Id}}", image)
	if err != nil {
		return nil, err
	}
	kernel, err := uml.Kernel(ctx, cache, p.Step)
	if err != nil {
		return nil, err
	}
	disk, err := uml.Disk(ctx, cache, image, imageID, p.Step)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("aah%d", os.Getpid()%100000)
	bridge := name + "br"
	for i, args := range [][]string{{"link", "add", bridge, "type", "bridge"}, {"link", "set", bridge, "up"}} {
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		if i == 0 {
			t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
		}
	}
	n, err := uml.Boot(ctx, uml.StateRoot(cache), uml.Config{
		Name: name + "-uml", Cluster: name, Disk: disk, Kernel: kernel,
		Bridge: bridge, Subnet: "10.254.254.0/24", Gateway: "10.254.254.1",
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := n.Remove(); err != nil {
			t.Errorf("removing UML machine %s: %v", n.Name, err)
		}
	})
	mctx, mstop := context.WithCancel(ctx)
	t.Cleanup(mstop)
	go n.Milestones(mctx, p.Step)
	start := time.Now()
	for {
		ectx, ecancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := n.Exec(ectx, nil, "systemctl", "stop", "kubelet.service")
		ecancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil || !n.Running() || time.Since(start) > 3*time.Minute {
			return nil, fmt.Errorf("UML machine %s: no exec channel after %s (%v); console:\n%s", n.Name, time.Since(start).Round(time.Second), err, n.ConsoleTail(30))
		}
	}
	p.Step("UML machine %s up in %.0fs", n.Name, time.Since(start).Seconds())
	return n, nil
}

// umlMachine is the UML machine that plays the AppArmor host.
type umlMachine struct{ n *uml.Node }

func (m *umlMachine) sh(ctx context.Context, t *testing.T, script string) string {
	t.Helper()
	out, err := m.n.Exec(ctx, nil, "sh", "-euc", script)
	if err != nil {
		t.Fatalf("on %s: %v\n%s", m.n.Name, err, out)
	}
	return out
}

func (m *umlMachine) kernelProfiles(ctx context.Context, t *testing.T) string {
	return m.sh(ctx, t, "cat "+securityFS+"/apparmor/profiles")
}

// copyIn writes a host file to path on the machine.
func (m *umlMachine) copyIn(ctx context.Context, t *testing.T, src, path string, mode os.FileMode) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	q := "'" + path + "'"
	if out, err := m.n.Exec(ctx, f, "sh", "-euc", fmt.Sprintf("mkdir -p \"$(dirname %s)\" && cat > %s && chmod %o %s", q, q, mode, q)); err != nil {
		t.Fatalf("copying %s to %s: %v\n%s", src, path, err, out)
	}
}

// The nested node: the machine's file system (the node image it booted
// from) as an overlay whose writes go to memory, without the units that
// make the machine a UML node (its own securityfs mount among them) and
// without the kubelet; /var/lib/containerd of its own (kind gives nodes a
// /var volume); the images its CRI containers use, exported from the
// machine's containerd.
//
// And containerd.service gets container=docker, the node image's
// environment, from a drop-in of the test: systemd 257 of the node images
// does not pass its own $container to services, so without it the
// variable skewproof's drop-in unsets would never be there and breaking
// that drop-in would go unseen; with it the node is one whose systemd
// passes the variable on, and the drop-in must remove it.
const nestedSetup = `
mkdir -p /aah/lower /aah/rw /aah/root /aah/containerd
mount --bind / /aah/lower
mount -t tmpfs tmpfs /aah/rw
mkdir /aah/rw/upper /aah/rw/work
mount -t overlay overlay -o lowerdir=/aah/lower,upperdir=/aah/rw/upper,workdir=/aah/rw/work /aah/root
rm -f /aah/root/etc/systemd/system/multi-user.target.wants/skewproof-uml* /aah/root/etc/systemd/system/multi-user.target.wants/kubelet.service
mkdir -p /aah/root/etc/systemd/system/containerd.service.d
printf '[Service]\nEnvironment=container=docker\n' > /aah/root/etc/systemd/system/containerd.service.d/10-test-container-env.conf
ctr -n k8s.io images export /aah/root/skewproof-images.tar registry.k8s.io/pause:3.10.2 ` + nodefacts.BusyBoxImage + `
`

// nestedNode is the kind node started inside the machine.
type nestedNode struct {
	m   *umlMachine
	seq atomic.Int64
}

const nestedID = "aah-node"

// startNestedNode starts the nested node with mounts (kind's ExtraMounts:
// a host path that is a file on this host is copied into the machine and
// mounted from there; any other is the machine's own path, the "host's")
// and waits until its containerd serves.
func (m *umlMachine) startNestedNode(ctx context.Context, t *testing.T, mounts []v1alpha4.Mount, inner string) *nestedNode {
	t.Helper()
	start := time.Now()
	m.sh(ctx, t, nestedSetup)
	m.copyIn(ctx, t, inner, "/aah/root"+nestedTestPath, 0o755)
	t.Logf("nested node's file system ready in %.0fs", time.Since(start).Seconds())
	args := []string{"ctr", "-n", "aah", "run", "-d", "--log-uri", "file:///aah/node.log", "--privileged",
		// kind's node containers: container=docker, a cgroup file system
		"--env", "container=docker", "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--mount", "type=cgroup,src=cgroup,dst=/sys/fs/cgroup,options=rw:nosuid:nodev:noexec",
		"--mount", "type=bind,src=/aah/containerd,dst=/var/lib/containerd,options=rbind:rw",
	}
	for _, mt := range mounts {
		src := mt.HostPath
		if fi, err := os.Stat(mt.HostPath); err == nil && fi.Mode().IsRegular() {
			src = "/aah/host" + mt.HostPath
			m.copyIn(ctx, t, mt.HostPath, src, 0o644)
		}
		opt := "rbind:rw"
		if mt.Readonly {
			opt = "rbind:ro"
		}
		args = append(args, "--mount", fmt.Sprintf("type=bind,src=%s,dst=%s,options=%s", src, mt.ContainerPath, opt))
	}
	args = append(args, "--rootfs", "/aah/root", nestedID, "/usr/local/bin/entrypoint", "/sbin/init")
	t.Logf("nested node: %s", strings.Join(args, " "))
	if out, err := m.n.Exec(ctx, nil, args...); err != nil {
		t.Fatalf("starting the nested node: %v\n%s", err, out)
	}
	nn := &nestedNode{m: m}
	start = time.Now()
	for {
		out, err := nn.exec(ctx, "sh", "-c", "systemctl is-active containerd && ctr version >/dev/null")
		if err == nil {
			break
		}
		if ctx.Err() != nil || time.Since(start) > 3*time.Minute {
			log, _ := m.n.Exec(ctx, nil, "tail", "-30", "/aah/node.log")
			t.Fatalf("the nested node's containerd is not up after %s: %v %s\nnode log:\n%s", time.Since(start).Round(time.Second), err, out, log)
		}
		time.Sleep(2 * time.Second)
	}
	// What containerd decides on (containerd pkg/apparmor, hostSupports):
	// no $container in its environment.
	env, err := nn.exec(ctx, "sh", "-c", `tr '\0' '\n' < /proc/$(pidof containerd)/environ`)
	if err != nil {
		t.Fatalf("containerd's environment in the nested node: %v\n%s", err, env)
	}
	for _, l := range strings.Split(env, "\n") {
		if strings.HasPrefix(l, "container=") {
			t.Errorf("the nested node's containerd runs with %s in its environment: it will not apply AppArmor", l)
		}
	}
	if out, err := nn.exec(ctx, "ctr", "-n", "k8s.io", "images", "import", "/skewproof-images.tar"); err != nil {
		t.Fatalf("importing the images into the nested node: %v\n%s", err, out)
	}
	t.Logf("nested node up, images imported, in %.0fs", time.Since(start).Seconds())
	return nn
}

// exec runs a command in the nested node (ctr task exec), standard error
// with its output.
func (nn *nestedNode) exec(ctx context.Context, args ...string) (string, error) {
	id := fmt.Sprintf("x%d", nn.seq.Add(1))
	return nn.m.n.Exec(ctx, nil, append([]string{"sh", "-c", `exec ctr -n aah task exec --exec-id "$0" "$@" 2>&1`, id, nestedID}, args...)...)
}
