package bundle

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// kubeletGroup is the worker nodes of one kubelet version whose hosts have
// the same facts: the oracle gives them the same expectations.
type kubeletGroup struct {
	kubelet string // as recorded
	version *version.Version
	host    skew.HostFacts
	// unknownAppArmor: neither the node nor the host record says whether
	// AppArmor is on; the rules are evaluated as without AppArmor.
	unknownAppArmor bool
	// unknownSeccomp: no host record; evaluated as with seccomp.
	unknownSeccomp bool
	nodes          []string
}

// kubeletGroups groups the record's worker nodes (all nodes when none is a
// worker) by kubelet version and host facts.
func kubeletGroups(rec reports.Record) []*kubeletGroup {
	nodes := []reports.NodeRecord{}
	for _, n := range rec.Nodes {
		if !n.ControlPlane {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		nodes = rec.Nodes
	}
	var groups []*kubeletGroup
	byKey := map[string]*kubeletGroup{}
	for _, n := range nodes {
		g := kubeletGroup{kubelet: n.Kubelet, host: skew.HostFacts{Seccomp: true, Runtime: "containerd"}}
		g.version, _ = release.ParseReleaseVersion(n.Kubelet)
		if rt, _, _ := strings.Cut(n.ContainerRuntime, "://"); rt != "" {
			g.host.Runtime = rt
		}
		switch {
		case n.AppArmor != nil:
			g.host.AppArmor = *n.AppArmor
		case rec.Host != nil:
			// kind nodes share the kernel of the host the run started from.
			g.host.AppArmor = rec.Host.AppArmor
		default:
			g.unknownAppArmor = true
		}
		if rec.Host != nil {
			g.host.Seccomp = rec.Host.Seccomp
		} else {
			g.unknownSeccomp = true
		}
		key := fmt.Sprintf("%s\x00%v\x00%v\x00%v", n.Kubelet, g.host, g.unknownAppArmor, g.unknownSeccomp)
		if old, ok := byKey[key]; ok {
			old.nodes = append(old.nodes, n.Name)
			continue
		}
		g.nodes = []string{n.Name}
		byKey[key] = &g
		groups = append(groups, &g)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i].version, groups[j].version
		switch {
		case a != nil && b != nil && !a.Equal(b):
			return a.LessThan(b)
		case (a == nil) != (b == nil):
			return a != nil
		}
		return false
	})
	return groups
}

func (g *kubeletGroup) describeHost() string {
	aa := "AppArmor " + yesNo(g.host.AppArmor)
	if g.unknownAppArmor {
		aa = "AppArmor unknown (evaluated as no)"
	}
	sc := "seccomp " + yesNo(g.host.Seccomp)
	if g.unknownSeccomp {
		sc = "seccomp unknown (evaluated as yes)"
	}
	return fmt.Sprintf("%s, %s, runtime %s", sc, aa, g.host.Runtime)
}

// simulateCommand is the 'skewproof simulate' command that prints the same
// table.
func simulateCommand(a, k *version.Version, h skew.HostFacts) string {
	return fmt.Sprintf("skewproof simulate --apiserver %s --kubelet %s%s --format markdown", a, k, reports.HostFlags(h))
}

// writeOracle writes oracle.md: for the run's API server version and each
// kubelet version (and host) of its workers, every rule with its expected
// outcome (the tables of 'skewproof simulate --format markdown'), then
// every rule's KEP and upstream citations.
func writeOracle(w io.Writer, rec reports.Record) error {
	fmt.Fprintf(w, "# Oracle rules in force: kube-apiserver %s\n\n", vprefix(rec.APIServer))
	fmt.Fprintln(w, "The expected outcome of every rule of skewproof's oracle for the versions of this run:")
	fmt.Fprintln(w, "apiserver rules at the kube-apiserver version, kubelet rules at each worker's kubelet version")
	fmt.Fprintln(w, "and host. A verdict in junit_01.xml compares what a spec observed with these expectations")
	fmt.Fprintln(w, "(`pass`: as the KEP plans; `deviation`: as the upstream release does where it differs from the plan).")
	fmt.Fprintln(w)
	apiserver, aerr := release.ParseReleaseVersion(rec.APIServer)
	groups := kubeletGroups(rec)
	if aerr != nil {
		fmt.Fprintf(w, "No rule evaluated: the kube-apiserver version of %s is not a release version: %v.\n\n", RecordFile, aerr)
	}
	if len(groups) == 0 {
		fmt.Fprintf(w, "No rule evaluated: %s records no node.\n\n", RecordFile)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "- kubelet %s on %s: %s\n", vprefix(g.kubelet), strings.Join(g.nodes, ", "), g.describeHost())
	}
	if len(groups) > 0 {
		fmt.Fprintln(w)
	}
	if aerr == nil {
		for _, g := range groups {
			if g.version == nil {
				fmt.Fprintf(w, "## kubelet %s (%s)\n\nNo rule evaluated: the kubelet version is not a release version.\n\n", vprefix(g.kubelet), strings.Join(g.nodes, ", "))
				continue
			}
			es, err := skew.Simulate(apiserver, g.version, g.host)
			if err != nil {
				fmt.Fprintf(w, "## kubelet %s (%s)\n\nNo rule evaluated: %v.\n\n", vprefix(g.kubelet), strings.Join(g.nodes, ", "), err)
				continue
			}
			var buf bytes.Buffer
			if err := reports.WriteSimulation(&buf, reports.Markdown, es, simulateCommand(apiserver, g.version, g.host)); err != nil {
				return err
			}
			// One level down: the page's title is the only top heading.
			text := buf.String()
			if strings.HasPrefix(text, "#") {
				text = "#" + text
			}
			text = strings.ReplaceAll(text, "\n#", "\n##")
			fmt.Fprintf(w, "%s\nNodes: %s (%s).\n\n", text, strings.Join(g.nodes, ", "), g.describeHost())
		}
	}
	return writeCitations(w)
}

// writeCitations lists every rule with its KEP reference, the upstream
// source its upstream phases were read from and the releases read.
func writeCitations(w io.Writer) error {
	fmt.Fprintln(w, "## Citations")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Outside the releases whose sources were read for a rule its verdict is skip, \"not researched\".")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| id | component | KEP reference | upstream source | sources read |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for _, r := range skew.Rules() {
		src := r.Source
		if r.SameAs != "" {
			src = strings.TrimSpace(src + " (same as `" + r.SameAs + "`)")
		}
		if _, err := fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s |\n", r.ID, r.Component, mdCell(r.KEPRef), mdCell(src), r.Read); err != nil {
			return err
		}
	}
	return nil
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
