package skew

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/skew/release"
)

// ObservedVerdict is one verdict a real cluster gave: a rule judged pass or
// deviation at a version pair (ledger observed.json; hack/observed adds a
// run's summary.json to it). Together they are where the oracle was
// observed rather than only read (docs/oracle/observed.md); the test
// TestObservedVerdictsAgreeWithOracle keeps every rule's windows true to
// them.
type ObservedVerdict struct {
	ID        string `json:"id"`
	Apiserver string `json:"apiserver"`
	// Kubelet is empty for an API server rule: observed at the API
	// server, the verdict holds for every node.
	Kubelet string `json:"kubelet,omitempty"`
	// Runtime is the node's CRI and OCI runtime, e.g. "containerd+runc".
	Runtime string `json:"runtime,omitempty"`
	// AppArmor: the node's kernel enforced AppArmor (an AppArmor node,
	// or a kind node on an AppArmor host).
	AppArmor bool    `json:"apparmor,omitempty"`
	Verdict  Verdict `json:"verdict"`
	// Run names the run: its date and what it was, e.g.
	// "2026-11-27 history leg 1.26".
	Run string `json:"run"`
}

// Host is the node the verdict was observed on, as the oracle takes it.
func (o ObservedVerdict) Host() (HostFacts, error) {
	h := HostFacts{Seccomp: true, AppArmor: o.AppArmor, Runtime: "containerd"}
	if o.Runtime != "" {
		rt, err := ParseRuntime(o.Runtime)
		if err != nil {
			return h, err
		}
		h.Runtime, h.RuntimeVersion, h.OCIRuntime, h.OCIRuntimeVersion = rt.Runtime, rt.RuntimeVersion, rt.OCIRuntime, rt.OCIRuntimeVersion
	}
	return h, nil
}

// Cluster is the version pair as the reports write it: "1.26.15/1.24.17",
// or the API server's version alone for an API server rule.
func (o ObservedVerdict) Cluster() string {
	if o.Kubelet == "" {
		return o.Apiserver
	}
	return o.Apiserver + "/" + o.Kubelet
}

// KubeletVersion is the kubelet the verdict was observed with, the API
// server's version for an API server rule (any kubelet).
func (o ObservedVerdict) KubeletVersion() string {
	if o.Kubelet == "" {
		return o.Apiserver
	}
	return o.Kubelet
}

//go:embed observed.json
var observedJSON []byte

var observed = mustObserved(observedJSON)

func mustObserved(b []byte) []ObservedVerdict {
	var out []ObservedVerdict
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("skew/observed.json: %v", err))
	}
	return out
}

// ObservedVerdicts returns the ledger, sorted by id, then versions.
func ObservedVerdicts() []ObservedVerdict { return slices.Clone(observed) }

// ObservedAt returns the ledger's verdicts of rule id at the minors of
// the pair: the API server's alone for an API server rule, both for a
// kubelet rule.
func ObservedAt(id string, apiserver, kubelet release.Minor) []ObservedVerdict {
	r, ok := RuleByID(id)
	if !ok {
		return nil
	}
	var out []ObservedVerdict
	for _, o := range observed {
		if o.ID != id || release.MinorOf(release.MustParseVersion(o.Apiserver)) != apiserver {
			continue
		}
		if r.Component == Kubelet && release.MinorOf(release.MustParseVersion(o.KubeletVersion())) != kubelet {
			continue
		}
		out = append(out, o)
	}
	return out
}

// SortObserved orders a ledger by id, API server, kubelet, runtime.
func SortObserved(os []ObservedVerdict) {
	slices.SortFunc(os, func(a, b ObservedVerdict) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		if c := release.MustParseVersion(a.Apiserver).Compare(release.MustParseVersion(b.Apiserver)); c != 0 {
			return c
		}
		if c := release.MustParseVersion(a.KubeletVersion()).Compare(release.MustParseVersion(b.KubeletVersion())); c != 0 {
			return c
		}
		return strings.Compare(a.Runtime, b.Runtime)
	})
}
