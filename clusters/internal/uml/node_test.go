package uml

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestNodeAddress(t *testing.T) {
	for subnet, want := range map[string]string{
		"172.18.0.0/16":  "172.18.255.254/16",
		"172.19.0.1/16":  "172.19.255.254/16",
		"10.0.3.0/24":    "10.0.3.254/24",
		"192.168.8.0/30": "192.168.8.2/30",
	} {
		if got, err := nodeAddress(subnet, 0); err != nil || got != want {
			t.Errorf("nodeAddress(%q, 0) = %q, %v; want %q", subnet, got, err, want)
		}
	}
	// Several nodes count back from the last address, each its own.
	for i, want := range []string{"172.18.255.254/16", "172.18.255.253/16", "172.18.255.252/16", "172.18.255.251/16"} {
		if got, err := nodeAddress("172.18.0.0/16", i); err != nil || got != want {
			t.Errorf("nodeAddress(172.18.0.0/16, %d) = %q, %v; want %q", i, got, err, want)
		}
	}
	for _, bad := range []string{"fc00:f853:ccd:e793::/64", "", "172.18.0.0"} {
		if got, err := nodeAddress(bad, 0); err == nil {
			t.Errorf("nodeAddress(%q, 0) = %q, want an error", bad, got)
		}
	}
	// Never into the half of the subnet Docker allocates from.
	if got, err := nodeAddress("10.0.3.0/24", 127); err == nil {
		t.Errorf("nodeAddress(10.0.3.0/24, 127) = %q, want an error", got)
	}
}

// Interface names fit Linux's 15 bytes, differ per node and between the
// two ends of one node's pair, and are the same every time.
func TestLinkNames(t *testing.T) {
	seen := map[string]string{}
	for _, n := range []string{"a-uml-worker", "b-uml-worker", "a-very-long-cluster-name-with-many-parts-uml-worker"} {
		for _, name := range []string{tapName(n), peerName(n)} {
			if len(name) > 15 {
				t.Errorf("%s: interface name %q is longer than 15 bytes", n, name)
			}
			if other, dup := seen[name]; dup {
				t.Errorf("%s and %s share the interface name %q", n, other, name)
			}
			seen[name] = n
		}
	}
	// The same name every time, in every process: cluster down finds the
	// link of a node another process booted.
	if got, want := tapName("a-uml-worker"), "skpumladb9b3e3"; got != want {
		t.Errorf("tapName(a-uml-worker) = %q, want %q", got, want)
	}
}

// A node's state is found again by another process: by cluster, by name,
// and a directory without node.json still names its node.
func TestNodesAndFind(t *testing.T) {
	root := t.TempDir()
	for _, n := range []*Node{
		{Name: "a-uml-worker", Cluster: "a", PID: 123, Tap: "skpumlx", Address: "172.18.255.254/16"},
		{Name: "b-uml-worker", Cluster: "b"},
	} {
		n.Dir = filepath.Join(root, n.Name)
		if err := os.MkdirAll(n.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := n.save(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "half-made"), 0o755); err != nil {
		t.Fatal(err)
	}
	all, err := Nodes(root, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("Nodes(all) = %d nodes, %v; want 3", len(all), err)
	}
	a, err := Nodes(root, "a")
	if err != nil || len(a) != 1 || a[0].Name != "a-uml-worker" || a[0].PID != 123 || a[0].Tap != "skpumlx" || a[0].Dir != filepath.Join(root, "a-uml-worker") {
		t.Errorf("Nodes(a) = %+v, %v", a, err)
	}
	if n := Find(root, "b-uml-worker"); n == nil || n.Cluster != "b" || n.Tap != tapName("b-uml-worker") {
		t.Errorf("Find(b-uml-worker) = %+v; want its state, with the default tap name", n)
	}
	if n := Find(root, "half-made"); n == nil || n.Cluster != "" {
		t.Errorf("Find(half-made) = %+v; want a node without a cluster", n)
	}
	if n := Find(root, "none"); n != nil {
		t.Errorf("Find(none) = %+v", n)
	}
	if ns, err := Nodes(filepath.Join(root, "absent"), ""); err != nil || ns != nil {
		t.Errorf("Nodes of a state root that does not exist = %v, %v; want none, no error", ns, err)
	}
}

func TestConsole(t *testing.T) {
	n := &Node{Name: "n-uml-worker", Dir: t.TempDir()}
	if got := n.ConsoleTail(3); got != "" {
		t.Errorf("ConsoleTail without a console = %q", got)
	}
	if err := os.WriteFile(n.Console(), []byte("boot\n[ 1.0] skewproof: node n set-up\nnoise\n[ 9.1] skewproof: joined, pod CIDR 10.244.3.0/24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := n.ConsoleTail(2), "noise\n[ 9.1] skewproof: joined, pod CIDR 10.244.3.0/24"; got != want {
		t.Errorf("ConsoleTail(2) = %q, want %q", got, want)
	}
	// Milestones: the "skewproof: " lines, also one written in two parts.
	f, err := os.OpenFile(n.Console(), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("[10.0] skewproof: half"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Milestones(ctx, func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf(format, args...))
		})
	}()
	time.Sleep(400 * time.Millisecond)
	if _, err := f.WriteString(" and the rest\n"); err != nil {
		t.Fatal(err)
	}
	want := []string{"n-uml-worker: node n set-up", "n-uml-worker: joined, pod CIDR 10.244.3.0/24", "n-uml-worker: half and the rest"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("milestones %q, want %q", got, want)
	}
}

// Exec against the node side of the exec directory: the loop of the node's
// own files/exec.sh, run here on a directory instead of its hostfs mount.
func TestExec(t *testing.T) {
	script, err := files.ReadFile("files/exec.sh")
	if err != nil {
		t.Fatal(err)
	}
	loop := string(script)
	i := strings.Index(loop, `cd "$d"`)
	if i < 0 {
		t.Fatal(`files/exec.sh has no 'cd "$d"': the test cannot run its loop`)
	}
	n := &Node{Name: "x-uml-worker", Dir: t.TempDir(), exited: make(chan struct{})}
	if err := os.MkdirAll(n.execDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "d="+n.execDir()+"\n"+loop[i:])
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.PID = cmd.Process.Pid // the loop stands for the kernel
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := n.Exec(ctx, strings.NewReader("from stdin\n"), "sh", "-c", "cat; echo \"$0 it's quoted\"", "arg with 'quotes'")
	if err != nil || out != "from stdin\narg with 'quotes' it's quoted" {
		t.Errorf("Exec = %q, %v", out, err)
	}
	_, err = n.Exec(ctx, nil, "sh", "-c", "echo to stderr >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3: to stderr") || !strings.Contains(err.Error(), "x-uml-worker") {
		t.Errorf("Exec of a failing command: %v; want its status and standard error, naming the node", err)
	}
	if ents, _ := os.ReadDir(n.execDir()); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("Exec left files in the exec directory: %v", names)
	}
	// A node whose kernel stopped answers at once, not at the deadline.
	close(n.exited)
	n.exitErr = &exec.ExitError{}
	start := time.Now()
	if _, err := n.Exec(ctx, nil, "sleep", "60"); err == nil || !strings.Contains(err.Error(), "not running") || time.Since(start) > 5*time.Second {
		t.Errorf("Exec on a stopped node: %v after %s", err, time.Since(start))
	}
	if n.Running() || n.ExitStatus() == "" {
		t.Errorf("a node whose kernel ended: Running %v, ExitStatus %q", n.Running(), n.ExitStatus())
	}
}

// Remove stops the kernel's whole process group and deletes the state;
// removing it again is not an error.
func TestRemove(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & sleep 300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &Node{Name: "r-uml-worker", Dir: t.TempDir(), PID: cmd.Process.Pid, Tap: "skpumlabsent", exited: make(chan struct{})}
	go func() { n.exitErr = cmd.Wait(); close(n.exited) }()
	if !n.Running() {
		t.Fatal("the fake kernel is not running")
	}
	if err := n.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if n.Running() {
		t.Error("the kernel still runs after Remove")
	}
	// The session's other processes were killed too; init reaps them a
	// moment later.
	var left []byte
	for i := 0; i < 40; i++ {
		if left, _ = exec.Command("pgrep", "-s", strconv.Itoa(cmd.Process.Pid)).Output(); len(left) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("processes of the kernel's session left: %s", left)
	}
	if _, err := os.Stat(n.Dir); !os.IsNotExist(err) {
		t.Errorf("state directory left: %v", err)
	}
	if err := n.Remove(); err != nil {
		t.Errorf("Remove again: %v", err)
	}
}
