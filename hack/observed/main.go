// Command observed adds the judged verdicts of real runs to the oracle's
// ledger of observations (skew/observed.json), from the summary.json that
// `skewproof report` (or `run --matrix`) writes:
//
//	go run ./hack/observed -run "2026-11-27 history leg 1.26" _artifacts/report/summary.json
//
// Every pass and deviation of a cell is recorded with its versions, the
// node's runtime and whether its kernel enforced AppArmor (an AppArmor node,
// named *-uml-worker*, or -host-apparmor); a verdict of skewproof's own
// staging, a skip, a failure or a flake is not an observation of the
// release and is left out. A cell already in the ledger is replaced. Then
// regenerate docs/oracle/observed.md:
//
//	go test ./reports -run TestObservedDocIsCurrent -update
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/skewproof/skewproof/reports/matrix"
	"github.com/skewproof/skewproof/skew"
)

func main() {
	run := flag.String("run", "", "the run's name in the ledger: its date and what it was (required)")
	ledger := flag.String("ledger", "skew/observed.json", "the ledger to update")
	hostAppArmor := flag.Bool("host-apparmor", false, "the run's host kernel had AppArmor (its kind nodes enforced it)")
	flag.Parse()
	if *run == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/observed -run NAME summary.json...")
		os.Exit(2)
	}
	if err := add(*ledger, *run, *hostAppArmor, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "observed:", err)
		os.Exit(1)
	}
}

func add(path, run string, hostAppArmor bool, summaries []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []skew.ObservedVerdict
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	key := func(o skew.ObservedVerdict) string {
		return strings.Join([]string{o.ID, o.Apiserver, o.Kubelet, o.Runtime, fmt.Sprint(o.AppArmor)}, " ")
	}
	at := map[string]int{}
	for i, o := range out {
		at[key(o)] = i
	}
	added := 0
	for _, p := range summaries {
		var s matrix.Summary
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, c := range s.Cells {
			r, ok := skew.RuleByID(c.ID)
			if !ok {
				continue // not an oracle rule (the profiles suite)
			}
			for _, e := range c.Entries {
				if (e.Verdict != skew.Pass && e.Verdict != skew.Deviation) || e.Staged != "" {
					continue
				}
				o := skew.ObservedVerdict{ID: c.ID, Apiserver: c.APIServer, Kubelet: c.Kubelet, Runtime: c.Runtime,
					AppArmor: hostAppArmor || strings.Contains(e.Node, "-uml-worker"), Verdict: e.Verdict, Run: run}
				if r.Component == skew.Apiserver {
					// Observed at the API server: it holds for every node.
					o.Kubelet, o.Runtime, o.AppArmor = "", "", false
				}
				if i, ok := at[key(o)]; ok {
					out[i] = o
				} else {
					at[key(o)] = len(out)
					out = append(out, o)
				}
				added++
			}
		}
	}
	skew.SortObserved(out)
	b, err = json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("%d verdicts from %s; the ledger has %d\n", added, strings.Join(summaries, ", "), len(out))
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
