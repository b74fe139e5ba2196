package reports

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skewproof/skewproof/skew"
)

// RecordFile is the name of the run record beside a run's JUnit file.
const RecordFile = "run.json"

// Record is what a run records beside its JUnit file: the exact command,
// the versions, the host, node and runtime facts, and the selection. The
// results bundle (skewproof bundle) carries it.
type Record struct {
	// Command is the command line of the run (argv), or of the in-cluster
	// entrypoint with its E2E_* settings.
	Command []string `json:"command"`
	// Skewproof is the version of the skewproof binary (its module version
	// or VCS revision).
	Skewproof string `json:"skewproof"`
	// Mode: "new-cluster", "existing-cluster" or "in-cluster".
	Mode      string `json:"mode"`
	Cluster   string `json:"cluster"`
	APIServer string `json:"apiserver"`
	// Host is the machine the run started from (empty in-cluster).
	Host *HostRecord `json:"host,omitempty"`
	// NodeAccess sums up the access to the nodes from the host: "docker"
	// (every node a local container), "none" (no node), "mixed" (some:
	// a User-Mode Linux node beside kind nodes); each node's is in
	// Nodes[].Access.
	NodeAccess string       `json:"nodeAccess"`
	Nodes      []NodeRecord `json:"nodes"`
	Suites     []string     `json:"suites"`
	// LabelFilter, Focus and Skip select the specs (Ginkgo syntax).
	LabelFilter string    `json:"labelFilter,omitempty"`
	Focus       string    `json:"focus,omitempty"`
	Skip        string    `json:"skip,omitempty"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished"`
	// JUnit is the file name of the run's JUnit report in the same directory.
	JUnit string `json:"junit"`
	// Logs are the file names (globs allowed) of its logs in the same directory.
	Logs []string `json:"logs,omitempty"`
	// Certification: a certification run (--certify): every applicable id
	// judged on every node, no skip but for a fact of the release.
	Certification bool `json:"certification,omitempty"`
	// AllowFlaky: flaky specs were tolerated (--allow-flaky).
	AllowFlaky bool `json:"allowFlaky,omitempty"`
	// AllowedNotReadyNodes is --allowed-not-ready-nodes.
	AllowedNotReadyNodes int `json:"allowedNotReadyNodes,omitempty"`
	// NotTested are the nodes whose kubelet rules could not run, with why.
	NotTested map[string]string `json:"notTested,omitempty"`
	// RuntimeNotResearched are the results judged against the KEP alone
	// because their rule's outcome depends on the container runtime and
	// skewproof has not read the node's (docs/runtimes.md, "A runtime not
	// read"): a vendor's runtime, or a release outside the minors read.
	RuntimeNotResearched []RuntimeUnreadRecord `json:"runtimeNotResearched,omitempty"`
	// Verdict is the run's own verdict, as its exit status says it:
	// VerdictGreen or VerdictRed ("" in a record written before the run
	// ended, or by an older skewproof).
	Verdict string `json:"verdict,omitempty"`
	// ExitStatus is the status the run exited with (0 green, 1 red, 130
	// interrupted), and Reason why it is not 0.
	ExitStatus int    `json:"exitStatus"`
	Reason     string `json:"reason,omitempty"`
}

// The run's verdicts (Record.Verdict).
const (
	VerdictGreen = "green"
	VerdictRed   = "red"
)

// SetVerdict records how the run ended: its exit status and the error that
// made it (nil: green).
func (r *Record) SetVerdict(status int, err error) {
	r.ExitStatus, r.Verdict, r.Reason = status, VerdictGreen, ""
	if status != 0 || err != nil {
		r.Verdict = VerdictRed
		if err != nil {
			r.Reason = err.Error()
		}
	}
}

// Red says whether the record says the run was not green, and why.
func (r Record) Red() (bool, string) {
	if r.Verdict == VerdictRed || r.ExitStatus != 0 {
		why := r.Reason
		if why == "" {
			why = fmt.Sprintf("exit status %d", r.ExitStatus)
		}
		return true, why
	}
	return false, ""
}

// RuntimeUnreadRecord is one result judged against the KEP alone for want
// of skewproof's reading of the node's container runtime.
type RuntimeUnreadRecord struct {
	ID   string `json:"id"`
	Node string `json:"node,omitempty"`
	// Runtime is the node's CRI and OCI runtime ("containerd 1.7.24 crun 1.21").
	Runtime string       `json:"runtime,omitempty"`
	Verdict skew.Verdict `json:"verdict"`
	Reason  string       `json:"reason"`
}

// HostRecord describes the machine a run started from.
type HostRecord struct {
	Kernel        string `json:"kernel"`
	Seccomp       bool   `json:"seccomp"`
	AppArmor      bool   `json:"apparmor"`
	CgroupVersion int    `json:"cgroupVersion"`
}

// NodeRecord is one node as the API server and the node agent report it.
type NodeRecord struct {
	Name             string `json:"name"`
	ControlPlane     bool   `json:"controlPlane,omitempty"`
	Kubelet          string `json:"kubelet"`
	ContainerRuntime string `json:"containerRuntime"`
	// OCIRuntime is the node's OCI runtime, name and version ("crun 1.21"),
	// from its labels skewproof.io/oci-runtime and -version; empty when the
	// node does not say.
	OCIRuntime    string `json:"ociRuntime,omitempty"`
	KernelVersion string `json:"kernelVersion"`
	OSImage       string `json:"osImage"`
	Architecture  string `json:"architecture"`
	// AppArmor: whether AppArmor profiles load on the node (from the node
	// agent's report); nil when unknown.
	AppArmor *bool `json:"apparmor,omitempty"`
	// Access is how the node's files are reached from the host: "docker"
	// (a local container) or "none"; empty when not recorded.
	Access string `json:"access,omitempty"`
}

// RecordLogPrefix begins the line of a log that holds the run record as
// JSON: the in-cluster entrypoint prints it into e2e.log, which is all
// Hydrophone fetches besides the JUnit file, so that a bundle can be made
// from what Hydrophone downloaded.
const RecordLogPrefix = "skewproof run record: "

// RecordLogLine is rec as one RecordLogPrefix line (no newline).
func RecordLogLine(rec Record) (string, error) {
	b, err := json.Marshal(rec)
	return RecordLogPrefix + string(b), err
}

// RecordFromLog finds the last run record line in a log and returns the
// record and its JSON; fs.ErrNotExist when there is none.
func RecordFromLog(path string) (Record, []byte, error) {
	var rec Record
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, nil, err
	}
	var raw string
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), RecordLogPrefix); ok {
			raw = rest
		}
	}
	if raw == "" {
		return rec, nil, fmt.Errorf("%s holds no %q line: %w", path, strings.TrimSpace(RecordLogPrefix), fs.ErrNotExist)
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return rec, nil, fmt.Errorf("%s: run record: %w", path, err)
	}
	pretty, err := json.MarshalIndent(rec, "", "  ")
	return rec, append(pretty, '\n'), err
}

// WriteRecord writes rec as dir/run.json.
func WriteRecord(dir string, rec Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, RecordFile), append(b, '\n'), 0o644)
}

// ReadRecord reads dir/run.json.
func ReadRecord(dir string) (Record, error) {
	var rec Record
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", filepath.Join(dir, RecordFile), err)
	}
	return rec, nil
}
