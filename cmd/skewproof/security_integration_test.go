//go:build integration

package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// securityWatch watches a whole run (docs/reliability.md, Security):
//   - every pod of the cluster, from before the run to its end (a watch,
//     not samples: every pod a spec creates is seen): no privileged
//     container, host network, PID or IPC outside kube-system (kind's own);
//   - every few seconds, each node's addresses and listening sockets:
//     nothing reachable beyond loopback, the pod network and the project's
//     Docker network;
//   - every second, the listening sockets of the run's processes on the
//     host: loopback only;
//   - every few seconds, the host's privileged containers: of skewproof's,
//     only kind nodes.
type securityWatch struct {
	mu         sync.Mutex
	violations map[string]bool
	pods       map[string]bool // namespaces/names of pods seen outside kube-system
	nodeChecks int
	hostChecks int
	hostSocks  map[string]bool
	nodeSocks  map[string]bool
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

func (w *securityWatch) violate(v string) {
	w.mu.Lock()
	w.violations[v] = true
	w.mu.Unlock()
}

func watchSecurity(ctx context.Context, t *testing.T, cs kubernetes.Interface, cluster string, runPID int) *securityWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &securityWatch{violations: map[string]bool{}, pods: map[string]bool{}, hostSocks: map[string]bool{}, nodeSocks: map[string]bool{}, cancel: cancel}
	seePod := func(p *corev1.Pod) {
		if v := privilegeViolation(p); v != "" {
			w.violate(v)
		}
		if p.Namespace != "kube-system" {
			w.mu.Lock()
			w.pods[p.Namespace+"/"+p.Name] = true
			w.mu.Unlock()
		}
	}
	pl, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	for i := range pl.Items {
		seePod(&pl.Items[i])
	}
	w.wg.Add(3)
	go func() { // pods
		defer w.wg.Done()
		rv := pl.ResourceVersion
		for ctx.Err() == nil {
			wi, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				if ctx.Err() == nil {
					w.violate(fmt.Sprintf("pod watch failed (pods of the run unseen): %v", err))
				}
				return
			}
			for ev := range wi.ResultChan() {
				if ev.Type == watch.Error {
					if ctx.Err() != nil {
						return // the watch was stopped
					}
					w.violate(fmt.Sprintf("pod watch error (pods of the run unseen): %v", ev.Object))
					wi.Stop()
					return
				}
				if p, ok := ev.Object.(*corev1.Pod); ok {
					rv = p.ResourceVersion
					seePod(p)
				}
			}
			wi.Stop()
		}
	}()
	// The network the cluster's nodes are on, as Docker says it.
	network := dockerNetworkSubnets(ctx, t, containerNetwork(ctx, t, cluster+"-control-plane"))
	go func() { // nodes and Docker
		defer w.wg.Done()
		_ = wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
			w.checkNodes(ctx, cs, cluster, network)
			w.checkPrivilegedContainers(ctx)
			return false, nil
		})
	}()
	go func() { // the run's processes on the host
		defer w.wg.Done()
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			for _, pid := range descendants(runPID) {
				socks, err := procListening(pid)
				if err != nil {
					continue // the process ended meanwhile
				}
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				for _, s := range socks {
					w.mu.Lock()
					w.hostSocks[fmt.Sprintf("%s %s", strings.TrimSpace(string(comm)), s)] = true
					w.mu.Unlock()
					if !s.Addr().IsLoopback() {
						w.violate(fmt.Sprintf("%s (pid %d) listens on %s, beyond loopback", strings.TrimSpace(string(comm)), pid, s))
					}
				}
			}
			w.mu.Lock()
			w.hostChecks++
			w.mu.Unlock()
			return false, nil
		})
	}()
	return w
}

// stop ends the watch and fails t on what it saw.
func (w *securityWatch) stop(t *testing.T) {
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	var vs []string
	for v := range w.violations {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	for _, v := range vs {
		t.Error(v)
	}
	t.Logf("security watch: %d pods outside kube-system seen, %d node checks, %d host checks; listening on the host: %v; in the nodes (%d): %s",
		len(w.pods), w.nodeChecks, w.hostChecks, keys(w.hostSocks), len(w.nodeSocks), strings.Join(keys(w.nodeSocks), "; "))
	// The watch must have seen the run: its pods, several checks.
	if len(w.pods) < 10 || w.nodeChecks < 3 || w.hostChecks < 10 {
		t.Errorf("the security watch saw too little of the run to judge it")
	}
}

func (w *securityWatch) checkNodes(ctx context.Context, cs kubernetes.Interface, cluster string, network []netip.Prefix) {
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, n := range nl.Items {
		var podCIDRs []netip.Prefix
		for _, c := range n.Spec.PodCIDRs {
			if p, err := netip.ParsePrefix(c); err == nil {
				podCIDRs = append(podCIDRs, p)
			}
		}
		// kind names the node container after the node.
		out, err := exec.CommandContext(ctx, "docker", "exec", n.Name, "sh", "-c", "ss -H -ltnup && echo --- && ip -o addr").Output()
		if err != nil {
			if ctx.Err() == nil {
				w.violate(fmt.Sprintf("node %s: reading its sockets: %v", n.Name, err))
			}
			return
		}
		ssOut, ipOut, _ := strings.Cut(string(out), "---\n")
		socks, err1 := parseSS(ssOut)
		addrs, err2 := parseIPAddr(ipOut)
		if err1 != nil || err2 != nil {
			w.violate(fmt.Sprintf("node %s: %v %v", n.Name, err1, err2))
			return
		}
		for _, v := range nodeReachViolations(n.Name, addrs, socks, podCIDRs, network) {
			w.violate(v)
		}
		w.mu.Lock()
		for _, s := range socks {
			f := strings.Fields(s.Line)
			proc := ""
			if m := ssProcess.FindStringSubmatch(s.Line); m != nil {
				proc = " " + m[1]
			}
			w.nodeSocks[n.Name+" "+f[0]+" "+f[4]+proc] = true
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	w.nodeChecks++
	w.mu.Unlock()
}

// checkPrivilegedContainers: of the host's running containers that
// skewproof made (kind nodes, skewproof-* containers), only kind nodes are
// privileged.
func (w *securityWatch) checkPrivilegedContainers(ctx context.Context) {
	out, err := exec.CommandContext(ctx, "docker", "ps", "-q").Output()
	if err != nil || len(strings.Fields(string(out))) == 0 {
		return
	}
	args := append([]string{"inspect", "-f", `{{.Name}} {{.HostConfig.Privileged}} {{index .Config.Labels "io.x-k8s.kind.role"}}`}, strings.Fields(string(out))...)
	out, err = exec.CommandContext(ctx, "docker", args...).Output()
	if err != nil {
		return // a container went away meanwhile
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[1] == "true" && len(f) == 2 && strings.HasPrefix(f[0], "/skewproof-") {
			w.violate(fmt.Sprintf("container %s is privileged and is no kind node", strings.TrimPrefix(f[0], "/")))
		}
	}
}

// ssProcess is the first process name of ss -p: users:(("kubelet",pid=1,fd=2)).
var ssProcess = regexp.MustCompile(`users:\(\("([^"]+)"`)

// containerNetwork is the one Docker network a container is on.
func containerNetwork(ctx context.Context, t *testing.T, container string) string {
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", `{{range $net, $_ := .NetworkSettings.Networks}}{{$net}} {{end}}`, container).Output()
	if err != nil {
		t.Fatalf("docker inspect %s: %v", container, err)
	}
	nets := strings.Fields(string(out))
	if len(nets) != 1 {
		t.Fatalf("container %s is on networks %v, want exactly one (its cluster's)", container, nets)
	}
	return nets[0]
}

func dockerNetworkSubnets(ctx context.Context, t *testing.T, network string) []netip.Prefix {
	out, err := exec.CommandContext(ctx, "docker", "network", "inspect", "-f", `{{range .IPAM.Config}}{{.Subnet}} {{end}}`, network).Output()
	if err != nil {
		t.Fatalf("docker network inspect %s: %v", network, err)
	}
	var ps []netip.Prefix
	for _, s := range strings.Fields(string(out)) {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			t.Fatalf("network %s subnet %q: %v", network, s, err)
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		t.Fatalf("network %s has no subnet", network)
	}
	return ps
}

// descendants is pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(f) > 1 {
			if pp, err := strconv.Atoi(f[1]); err == nil {
				children[pp] = append(children[pp], p)
			}
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
