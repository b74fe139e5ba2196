package bundle

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skewproof/skewproof/reports"
)

// writeLogHeader writes the block that opens e2e.log. Its version lines
// have the form of the upstream e2e framework's ("kube-apiserver version:
// v1.37.2"), so a reader looking for the cluster version finds it.
func writeLogHeader(w io.Writer, rec reports.Record) {
	fmt.Fprintln(w, "skewproof run log (results bundle; a self-check in the layout of a CNCF conformance submission, not a CNCF certification)")
	fmt.Fprintf(w, "kube-apiserver version: %s\n", vprefix(rec.APIServer))
	for _, n := range rec.Nodes {
		role := ""
		if n.ControlPlane {
			role = ", control plane"
		}
		fmt.Fprintf(w, "kubelet version: %s (node %s%s)\n", vprefix(n.Kubelet), n.Name, role)
	}
	fmt.Fprintf(w, "skewproof version: %s\n", orUnknown(rec.Skewproof))
	fmt.Fprintf(w, "cluster: %s (mode %s)\n", orUnknown(rec.Cluster), orUnknown(rec.Mode))
	fmt.Fprintf(w, "suites: %s\n", orUnknown(strings.Join(rec.Suites, ", ")))
	fmt.Fprintf(w, "started: %s, finished: %s\n", timeText(rec.Started), timeText(rec.Finished))
	fmt.Fprintf(w, "command: %s\n", orUnknown(shellJoin(rec.Command)))
	fmt.Fprintln(w, strings.Repeat("-", 72))
}

// versionsText is versions.txt: skewproof, the API server, and each
// node's kubelet, runtime and kernel.
func versionsText(rec reports.Record, tool string) []byte {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "skewproof (run)\t%s\n", orUnknown(rec.Skewproof))
	fmt.Fprintf(tw, "skewproof (bundle)\t%s\n", orUnknown(tool))
	fmt.Fprintf(tw, "kube-apiserver\t%s\n", vprefix(rec.APIServer))
	fmt.Fprintf(tw, "cluster\t%s\n", orUnknown(rec.Cluster))
	fmt.Fprintf(tw, "mode\t%s\n", orUnknown(rec.Mode))
	fmt.Fprintf(tw, "node access\t%s\n", orUnknown(rec.NodeAccess))
	if h := rec.Host; h != nil {
		fmt.Fprintf(tw, "host\tkernel %s, seccomp %s, AppArmor %s, cgroup v%d\n", orUnknown(h.Kernel), yesNo(h.Seccomp), yesNo(h.AppArmor), h.CgroupVersion)
	} else {
		fmt.Fprintf(tw, "host\tnot recorded\n")
	}
	if err := tw.Flush(); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	buf.WriteString("\nnodes:\n")
	tw = tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tKUBELET\tRUNTIME\tKERNEL\tOS\tARCH\tAPPARMOR")
	for _, n := range rec.Nodes {
		role := "worker"
		if n.ControlPlane {
			role = "control-plane"
		}
		aa := "unknown"
		if n.AppArmor != nil {
			aa = yesNo(*n.AppArmor)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, role, vprefix(n.Kubelet), orUnknown(n.ContainerRuntime),
			orUnknown(n.KernelVersion), orUnknown(n.OSImage), orUnknown(n.Architecture), aa)
	}
	if err := tw.Flush(); err != nil {
		panic(err)
	}
	if len(rec.Nodes) == 0 {
		buf.WriteString("(no node recorded)\n")
	}
	return buf.Bytes()
}

// commandText is command.txt: the run's command line, shell-quoted.
func commandText(rec reports.Record) string {
	if len(rec.Command) == 0 {
		return "# the run record holds no command\n"
	}
	return shellJoin(rec.Command) + "\n"
}

// readmeText is README.txt.
func readmeText(rec reports.Record) string {
	return fmt.Sprintf(`skewproof results bundle
========================

This is the result of one skewproof run: kube-apiserver %s, cluster %s,
finished %s.

skewproof checks the Kubernetes seccomp and AppArmor APIs under
kube-apiserver/kubelet version skew. This bundle is a SELF-CHECK laid out like
a CNCF conformance submission (junit_01.xml, e2e.log). It is NOT a CNCF
certification and cannot be submitted as one: skewproof's specs are not the
upstream [Conformance] specs.

Files:
  junit_01.xml  every test case of the run in one JUnit file (root
                <testsuites>); each case carries its id, verdict (pass,
                deviation, fail, skip), node, kubelet and API server versions,
                and what was observed and expected, as properties
  e2e.log       the run's log, after a header naming the kube-apiserver and
                kubelet versions
  run.json      the run record: command, versions, host, node and runtime facts,
                selection, start and finish times
  versions.txt  skewproof, kube-apiserver, each node's kubelet, runtime and kernel
  oracle.md     the oracle rules in force for these versions: each rule id with
                its expected outcome and its KEP and upstream citations
  command.txt   the exact command of the run, shell-quoted
  SHA256SUMS    SHA-256 of every other file (sha256sum -c SHA256SUMS)

Check the bundle with:
  skewproof bundle verify BUNDLE.tar.gz
or, after unpacking it:
  sha256sum -c SHA256SUMS
`, vprefix(rec.APIServer), orUnknown(rec.Cluster), timeText(rec.Finished))
}

// shellJoin quotes args for a POSIX shell and joins them with spaces.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = reports.ShellQuote(a)
	}
	return strings.Join(q, " ")
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "unknown"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format(time.RFC3339)
}
