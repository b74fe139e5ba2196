package harness

import (
	"strings"
	"testing"
)

// These tests need no cluster: they check how the observations of
// the runtime default seccomp profile are judged (seccomp/kubelet/enforce and every outcome naming skew.EffectSeccompRuntimeDefault).

func TestEnforceChecks(t *testing.T) {
	personality := func(controlOK, blockedOK bool) probeResult {
		return probeResult{Probe: enforceProbes[0], controlOK: controlOK, blockedOK: blockedOK,
			control: "personality(ADDR_NO_RANDOMIZE): ok", blocked: "personality(ADDR_NO_RANDOMIZE): linux64: personality(0x40000): Operation not permitted"}
	}
	userNS := func(controlOK, blockedOK bool) probeResult {
		return probeResult{Probe: enforceProbes[1], controlOK: controlOK, blockedOK: blockedOK,
			control: "unshare(CLONE_NEWUSER): unshare: unshare(0x10000000): Operation not permitted"}
	}
	for _, c := range []struct {
		name       string
		rs         []probeResult
		must       int
		unmade     int
		made       bool
		mustHolds  string
		unmadeHold string
	}{
		{name: "both blocked, both controls work", rs: []probeResult{personality(true, false), userNS(true, false)}, made: true},
		// A host with user namespaces off: unshare -U fails in both
		// containers. Before, that alone passed as "blocked"; now it
		// shows nothing and personality(2) carries the check.
		{name: "user namespaces off", rs: []probeResult{personality(true, false), userNS(false, false)}, made: true, unmade: 1, unmadeHold: "unshare(CLONE_NEWUSER) fails unconfined too"},
		{name: "user namespaces off, no other probe", rs: []probeResult{userNS(false, false)}, unmade: 1},
		// A filter that blocks nothing (a runtime that drops the profile).
		{name: "nothing blocked", rs: []probeResult{personality(true, true), userNS(true, true)}, made: true, must: 2, mustHolds: "succeeded: personality(ADDR_NO_RANDOMIZE)"},
		{name: "nothing blocked, user namespaces off", rs: []probeResult{personality(true, true), userNS(false, false)}, made: true, must: 1, unmade: 1},
		{name: "no control works", rs: []probeResult{personality(false, false), userNS(false, false)}, unmade: 2},
	} {
		must, unmade, made := enforceChecks(c.rs)
		if len(must) != c.must || len(unmade) != c.unmade || made != c.made {
			t.Errorf("%s: must %q, unmade %q, made %v; want %d, %d, %v", c.name, must, unmade, made, c.must, c.unmade, c.made)
		}
		if c.mustHolds != "" && (len(must) == 0 || !strings.Contains(must[0], c.mustHolds)) {
			t.Errorf("%s: must %q lacks %q", c.name, must, c.mustHolds)
		}
		if c.unmadeHold != "" && (len(unmade) == 0 || !strings.Contains(unmade[0], c.unmadeHold)) {
			t.Errorf("%s: unmade %q lacks %q", c.name, unmade, c.unmadeHold)
		}
	}
}

// The probe that carries the check must not need user namespaces: the
// first probe is not unshare.
func TestEnforceProbesNeedNoUserNamespace(t *testing.T) {
	for _, p := range enforceProbes {
		if !strings.Contains(p.Shell, "unshare") {
			return
		}
	}
	t.Errorf("every probe of seccomp/kubelet/enforce uses unshare: %+v", enforceProbes)
}
