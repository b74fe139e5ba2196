package uml

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Config describes one UML node.
type Config struct {
	Name    string // the Kubernetes node name
	Cluster string
	Disk    string // from Disk
	Kernel  string // the UML kernel (from Kernel, or the user's)
	// Bridge is the host bridge of the cluster's Docker network, Subnet and
	// Gateway its IPv4 range and address. The node takes the Index-th
	// address from the end of the subnet (0: the last; Docker allocates
	// from the first).
	Bridge, Subnet, Gateway string
	Index                   int
	Labels                  map[string]string
	// CPUs caps the node's virtual CPUs (0: as many as the kernel and the
	// host allow, KernelFeatures.CPUs).
	CPUs int
}

// JoinConfig is what a booted node needs to join its cluster, known once
// the control plane serves: the control-plane node's name and address
// (kubeadm's cluster-info names the API server by the node's name) and a
// bootstrap token.
type JoinConfig struct {
	ControlPlaneName, ControlPlaneIP, Token string
}

// memory is the UML kernel's memory (backed by a file in /dev/shm).
const memory = "2G"

// Node is a UML node that runs (or ran) on this host. Its state lives in a
// directory of its own, so that another skewproof process (cluster down,
// cluster list) finds it.
type Node struct {
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	PID     int    `json:"pid"`
	Tap     string `json:"tap"`
	Address string `json:"address"`
	Dir     string `json:"-"`

	// exited is closed when the kernel process that this process started
	// ends; exitErr is its status.
	exited  chan struct{}
	exitErr error
}

// Console is the node's console log.
func (n *Node) Console() string { return filepath.Join(n.Dir, "console.log") }

func (n *Node) execDir() string { return filepath.Join(n.Dir, "exec") }

// StateRoot is where the state directories of UML nodes live.
func StateRoot(cacheDir string) string { return filepath.Join(cacheDir, "uml", "nodes") }

// tapName is the host interface name (at most 15 bytes) of a node's link
// on the cluster bridge: a veth whose peer (peerName) the kernel uses.
// Deleting it deletes both.
func tapName(node string) string {
	h := sha256.Sum256([]byte(node))
	return "skpuml" + hex.EncodeToString(h[:])[:8]
}

// peerName is the other end of a node's veth pair.
func peerName(node string) string {
	h := sha256.Sum256([]byte(node))
	return "skpumr" + hex.EncodeToString(h[:])[:8]
}

// nodeAddress is the index-th host address from the end of an IPv4 subnet
// (0: the last).
func nodeAddress(subnet string, index int) (string, error) {
	p, err := netip.ParsePrefix(subnet)
	if err != nil || !p.Addr().Is4() {
		return "", fmt.Errorf("the cluster network has no IPv4 subnet (%q)", subnet)
	}
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	if index < 0 || uint32(index) >= host/2 {
		return "", fmt.Errorf("no address %d from the end of %s", index, subnet)
	}
	v |= host - 1 - uint32(index) // counted back from the last address before broadcast
	return fmt.Sprintf("%d.%d.%d.%d/%d", v>>24, v>>16&0xff, v>>8&0xff, v&0xff, p.Bits()), nil
}

// Boot starts a UML node: a copy-on-write file over the disk, a tap device
// on the cluster bridge and the kernel, detached from this process so that
// the node outlives `cluster up`. It returns once the kernel runs; the node
// boots up to its container runtime, and Join then joins it to the cluster
// (Milestones follows its console). On error nothing is left behind.
func Boot(ctx context.Context, stateRoot string, c Config) (n *Node, err error) {
	addr, err := nodeAddress(c.Subnet, c.Index)
	if err != nil {
		return nil, err
	}
	n = &Node{Name: c.Name, Cluster: c.Cluster, Tap: tapName(c.Name), Address: addr, Dir: filepath.Join(stateRoot, c.Name)}
	if _, err := os.Stat(n.Dir); err == nil {
		return nil, fmt.Errorf("AppArmor node %s already exists (state in %s); remove it with 'skewproof cluster down --name %s'", c.Name, n.Dir, c.Cluster)
	}
	if err := os.MkdirAll(n.execDir(), 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = n.Remove()
		}
	}()
	if err := n.save(); err != nil {
		return nil, err
	}
	// A veth pair: one end on the cluster's bridge, the kernel's vector
	// driver on the other through a raw socket (its raw transport has
	// vector I/O and offloads both ways; 7.3's tap transport has no queues
	// and its open dereferences them: vector_reset_stats).
	peer := peerName(c.Name)
	if err := ipCmd(ctx, "link", "add", n.Tap, "type", "veth", "peer", "name", peer); err != nil {
		return n, err
	}
	if err := ipCmd(ctx, "link", "set", peer, "up"); err != nil {
		return n, err
	}
	if err := ipCmd(ctx, "link", "set", n.Tap, "master", c.Bridge, "up"); err != nil {
		return n, err
	}
	var labels []string
	for k, v := range c.Labels {
		labels = append(labels, k+"="+v)
	}
	args := []string{
		"mem=" + memory,
	}
	args = append(args, Features(c.Kernel).Args(c.CPUs)...)
	args = append(args,
		"ubd0="+filepath.Join(n.Dir, "root.cow")+","+c.Disk,
		"root=/dev/ubda", "rw", "init=/sbin/init",
		// no cache flushes: the disk is a throw-away copy-on-write file,
		// and each flush is an fsync of that file on the host, done by the
		// driver's one I/O thread with every other request of the node
		// queued behind it
		"rootflags=nobarrier",
		"con=null", "con0=null,fd:1",
		// the kernel's management directory (its mconsole socket and pid
		// file) in the node's own, removed with it, not ~/.uml/<random>
		"umid=uml", "uml_dir="+n.Dir,
		// skewproof's kernel has AppArmor as its default LSM; a kernel a
		// user gives (Debian's) may default to SELinux.
		"apparmor=1", "security=apparmor",
		// the vector driver (in every UML kernel since 4.17; the old
		// drivers are gone since 6.16): the guest's interface is vec0
		"vec0:transport=raw,ifname="+peer+",depth=128,gro=1",
		"skewproof.name="+c.Name,
		"skewproof.addr="+addr,
		"skewproof.gw="+c.Gateway,
		"skewproof.labels="+strings.Join(labels, ","),
		"skewproof.exec="+n.execDir(),
		"skewproof.cluster="+c.Cluster,
	)
	console, err := os.Create(n.Console())
	if err != nil {
		return n, err
	}
	defer func() { _ = console.Close() }()
	cmd := exec.Command(c.Kernel, args...)
	cmd.Stdout, cmd.Stderr = console, console
	// UML backs the guest's memory with a file in TMPDIR (unlinked at once).
	cmd.Env = append(os.Environ(), "TMPDIR=/dev/shm")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return n, fmt.Errorf("starting %s: %w", c.Kernel, err)
	}
	n.PID = cmd.Process.Pid
	n.exited = make(chan struct{})
	go func() { // reap it if it ends while this process lives
		n.exitErr = cmd.Wait()
		close(n.exited)
	}()
	if err := n.save(); err != nil {
		return n, err
	}
	return n, nil
}

func ipCmd(ctx context.Context, args ...string) error {
	if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (n *Node) save() error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	tmp := filepath.Join(n.Dir, "node.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(n.Dir, "node.json"))
}

// Running reports whether the node's kernel process still runs.
func (n *Node) Running() bool {
	if n.PID <= 0 {
		return false
	}
	if n.exited != nil {
		select {
		case <-n.exited:
			return false
		default:
			return true
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.PID))
	if err != nil {
		return false
	}
	return strings.Contains(string(b), "skewproof.name="+n.Name+"\x00")
}

// Remove stops the node's kernel (its whole session: UML runs one host
// process per guest address space), deletes its tap device and its state
// directory (the copy-on-write file, the console log). Removing what is
// already gone is not an error.
func (n *Node) Remove() error {
	var errs []error
	if n.Running() {
		_ = syscall.Kill(-n.PID, syscall.SIGKILL)
		for i := 0; i < 100 && n.Running(); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if n.Running() {
			errs = append(errs, fmt.Errorf("the kernel of AppArmor node %s (pid %d) did not stop", n.Name, n.PID))
		}
	}
	if _, err := os.Stat("/sys/class/net/" + n.Tap); err == nil {
		if err := ipCmd(context.Background(), "link", "del", n.Tap); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(n.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Nodes lists the UML nodes with state on this host (running or not),
// those of one cluster when cluster is not empty.
func Nodes(stateRoot, cluster string) ([]*Node, error) {
	ents, err := os.ReadDir(stateRoot)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, e := range ents {
		dir := filepath.Join(stateRoot, e.Name())
		n := &Node{Name: e.Name(), Dir: dir}
		if b, err := os.ReadFile(filepath.Join(dir, "node.json")); err == nil {
			_ = json.Unmarshal(b, n)
			n.Dir = dir
		}
		if n.Tap == "" {
			n.Tap = tapName(n.Name)
		}
		if cluster == "" || n.Cluster == cluster {
			out = append(out, n)
		}
	}
	return out, nil
}

// Find returns the UML node named name, or nil.
func Find(stateRoot, name string) *Node {
	ns, _ := Nodes(stateRoot, "")
	for _, n := range ns {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Milestones sends the console's "skewproof: …" lines (the node's set-up and
// join steps) to step until ctx ends.
func (n *Node) Milestones(ctx context.Context, step func(string, ...any)) {
	f, err := os.Open(n.Console())
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReader(f)
	var partial string
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			partial += line
			select {
			case <-ctx.Done():
				return
			case <-time.After(300 * time.Millisecond):
				continue
			}
		}
		if err != nil {
			return
		}
		line, partial = partial+line, ""
		if i := strings.Index(line, "skewproof: "); i >= 0 {
			step("%s: %s", n.Name, strings.TrimSpace(line[i+len("skewproof: "):]))
		}
	}
}

// ExitStatus describes how the kernel process this process started ended
// ("" while it runs or when another process started it).
func (n *Node) ExitStatus() string {
	if n.exited == nil {
		return ""
	}
	select {
	case <-n.exited:
		if n.exitErr == nil {
			return "exit status 0"
		}
		return n.exitErr.Error()
	default:
		return ""
	}
}

// ConsoleTail is the end of the node's console log, for error messages.
func (n *Node) ConsoleTail(lines int) string {
	b, err := os.ReadFile(n.Console())
	if err != nil {
		return ""
	}
	l := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// Join joins a booted node to its cluster: kubeadm join with the token,
// then a wait for the node's podCIDR (files/join.sh), run through the exec
// directory once the node's container runtime runs. It returns when the
// script has ended; the host writes the node's CNI configuration then.
func (n *Node) Join(ctx context.Context, j JoinConfig) error {
	_, err := n.Exec(ctx, nil, "/kind/bin/skewproof-uml-join.sh", j.ControlPlaneIP+":6443", j.Token, j.ControlPlaneName, j.ControlPlaneIP)
	return err
}

var execSeq atomic.Int64

// Exec runs a command on the node through its exec directory (see
// files/exec.sh), with stdin as its standard input when not nil, and
// returns its standard output.
func (n *Node) Exec(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	id := fmt.Sprintf("%d-%d-%d", os.Getpid(), time.Now().UnixNano(), execSeq.Add(1))
	base := filepath.Join(n.execDir(), id)
	defer func() {
		for _, ext := range []string{".sh.tmp", ".sh", ".in", ".run", ".out", ".err", ".rc", ".rc.tmp"} {
			_ = os.Remove(base + ext)
		}
	}()
	if stdin != nil {
		f, err := os.Create(base + ".in")
		if err != nil {
			return "", err
		}
		_, err = io.Copy(f, stdin)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
	}
	var q []string
	for _, a := range args {
		q = append(q, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	if err := os.WriteFile(base+".sh.tmp", []byte(strings.Join(q, " ")+"\n"), 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(base+".sh.tmp", base+".sh"); err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(base + ".rc"); err == nil {
			out, _ := os.ReadFile(base + ".out")
			errb, _ := os.ReadFile(base + ".err")
			rc, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if rc != 0 {
				return string(out), fmt.Errorf("%s on %s: exit status %d: %s", strings.Join(args, " "), n.Name, rc, strings.TrimSpace(string(errb)))
			}
			return strings.TrimSpace(string(out)), nil
		}
		if !n.Running() {
			return "", fmt.Errorf("%s on %s: the node's kernel is not running", strings.Join(args, " "), n.Name)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
