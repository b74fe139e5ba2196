package skew

import (
	"reflect"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

func TestParseRuntime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want HostFacts
		err  string
	}{
		{in: "containerd", want: HostFacts{Runtime: "containerd"}},
		{in: "containerd/2.4.2", want: HostFacts{Runtime: "containerd", RuntimeVersion: "2.4.2"}},
		{in: "containerd/1.7.24+runc/1.1.15", want: HostFacts{Runtime: "containerd", RuntimeVersion: "1.7.24", OCIRuntime: "runc", OCIRuntimeVersion: "1.1.15"}},
		{in: "cri-o+crun", want: HostFacts{Runtime: "cri-o", OCIRuntime: "crun"}},
		{in: "cri-o/1.34.0+crun/1.21", want: HostFacts{Runtime: "cri-o", RuntimeVersion: "1.34.0", OCIRuntime: "crun", OCIRuntimeVersion: "1.21"}},
		{in: "", err: "no CRI runtime name"},
		{in: "/1.7.24", err: "no CRI runtime name"},
		{in: "containerd+", err: "no OCI runtime name"},
		{in: "containerd/latest", err: `CRI runtime version "latest"`},
		{in: "containerd+runc/x", err: `OCI runtime version "x"`},
	} {
		got, err := ParseRuntime(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseRuntime(%q) = %+v, %v; want error containing %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseRuntime(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		case c.err == "" && FormatRuntime(got) != c.in:
			t.Errorf("FormatRuntime(ParseRuntime(%q)) = %q", c.in, FormatRuntime(got))
		}
	}
}

func TestParseContainerRuntimeVersion(t *testing.T) {
	for _, c := range []struct{ in, name, ver string }{
		{"containerd://1.7.24", "containerd", "1.7.24"},
		{"containerd://2.4.2+unknown", "containerd", "2.4.2+unknown"},
		{"cri-o://1.34.0", "cri-o", "1.34.0"},
		{"containerd://Unknown", "containerd", ""},
		{"containerd", "containerd", ""},
		{"", "", ""},
	} {
		if n, v := ParseContainerRuntimeVersion(c.in); n != c.name || v != c.ver {
			t.Errorf("ParseContainerRuntimeVersion(%q) = %q, %q; want %q, %q", c.in, n, v, c.name, c.ver)
		}
	}
}

func TestRuntimeWindowMatches(t *testing.T) {
	w := RuntimeWindow{Runtime: Containerd, Versions: win("1.7", "1.8"), OCIRuntime: Runc, OCIVersions: win("1.1", "1.2")}
	cri := RuntimeWindow{Runtime: CRIO, Versions: win("1.34", "1.35")} // the OCI runtime does not matter
	for _, c := range []struct {
		w    RuntimeWindow
		host string
		want bool
	}{
		{w, "containerd/1.7.24+runc/1.1.15", true},
		{w, "containerd/1.7.24~ds1+runc/1.1.15+ds1", true}, // Debian's versions
		{w, "containerd/1.7.0+runc/1.1.0", true},           // same minors
		{w, "containerd/v1.7.24+runc/v1.1.15", true},
		{w, "containerd/2.4.2+runc/1.1.15", false},
		{w, "containerd/1.6.30+runc/1.1.15", false},
		{w, "containerd/1.7.24+runc/1.2.6", false},
		{w, "containerd/1.7.24+crun/1.21", false},
		{w, "containerd/1.7.24+kata-runtime", false},
		{w, "cri-o/1.7.24+runc/1.1.15", false},
		{w, "containerd", true},        // version and OCI runtime unstated
		{w, "containerd/1.7.24", true}, // OCI runtime unstated
		{w, "containerd+runc", true},   // versions unstated
		{w, "containerd/1.7+runc/1.1", true},
		{w, "Containerd/1.7.24+RUNC", true},
		{cri, "cri-o/1.34.0+anything", true},
		{cri, "crio/1.34.2", true},
		{cri, "cri-o/1.33.0", false},
	} {
		h, err := ParseRuntime(c.host)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.w.matches(h); got != c.want {
			t.Errorf("%s matches %s = %v, want %v", c.w, c.host, got, c.want)
		}
	}
	if !w.matches(HostFacts{}) {
		t.Error("a host that states no runtime must match every window")
	}
	if !w.matches(HostFacts{Runtime: Containerd, RuntimeVersion: "Unknown", OCIRuntime: Runc}) {
		t.Error(`the kubelet's "Unknown" version is an unstated one`)
	}
	if w.matches(HostFacts{Runtime: Containerd, RuntimeVersion: "one.seven"}) {
		t.Error("an unreadable version is no version read")
	}
}

// host builds the facts of a default host (seccomp and AppArmor) with the
// runtime given as --runtime takes it.
func host(t *testing.T, rt string) HostFacts {
	t.Helper()
	if rt == "" {
		return HostFacts{AppArmor: true, Seccomp: true}
	}
	h, err := ParseRuntime(rt)
	if err != nil {
		t.Fatal(err)
	}
	h.AppArmor, h.Seccomp = true, true
	return h
}

// TestRuntimeVariants: the outcome each runtime read takes, and the KEP
// alone where the runtime was not read.
func TestRuntimeVariants(t *testing.T) {
	researched := func(e Expectation) string {
		if e.RuntimeNotResearched != "" || e.RuntimeSource == "" {
			return "runtime not researched: " + e.RuntimeNotResearched
		}
		return ""
	}
	kepAlone := func(frag string) func(Expectation) string {
		return func(e Expectation) string {
			switch {
			case !strings.Contains(e.RuntimeNotResearched, frag):
				return "RuntimeNotResearched = " + e.RuntimeNotResearched + ", want " + frag
			case !reflect.DeepEqual(e.Expected, e.KEPPlanned) || e.Deviation:
				return "not judged against the KEP alone: " + describe(e.Expected)
			case e.Skip != "":
				return "skipped: " + e.Skip
			case !strings.Contains(e.Reason, "judged against the KEP plan"):
				return "reason: " + e.Reason
			}
			return ""
		}
	}
	reason := func(r string) func(Expectation) string {
		return func(e Expectation) string {
			if e.Expected.Container == nil || e.Expected.Container.Reason != r {
				return "want reason " + r + ": " + describe(e.Expected)
			}
			return ""
		}
	}
	profile := func(p string) func(Expectation) string {
		return func(e Expectation) string {
			if e.Expected.Container == nil || e.Expected.Container.AppArmorProfile != p {
				return "want AppArmor profile " + p + ": " + describe(e.Expected)
			}
			return ""
		}
	}
	summary := func(frag string) func(Expectation) string {
		return func(e Expectation) string {
			if !strings.Contains(e.Expected.Summary, frag) {
				return "summary lacks " + frag + ": " + e.Expected.Summary
			}
			return ""
		}
	}
	dev := func(want bool) func(Expectation) string {
		return func(e Expectation) string {
			if e.Deviation != want {
				return "deviation: " + e.Reason
			}
			return ""
		}
	}
	sameAsDefault := func(e Expectation) string {
		d, _ := Expect(e.ID, release.MustParseVersion(e.Apiserver), release.MustParseVersion(e.Kubelet), DefaultHost)
		if !sameObservation(d.Expected, e.Expected) || d.Expected.Summary != e.Expected.Summary || d.Deviation != e.Deviation {
			return "differs from containerd 1.7 + runc: " + describe(e.Expected)
		}
		return ""
	}
	for _, c := range []struct {
		id, runtime string
		checks      []func(Expectation) string
	}{
		// RuntimeDefault seccomp: EPERM on containerd, ENOSYS on CRI-O.
		{"seccomp/kubelet/enforce", "containerd/1.7.24+runc/1.1.15", nil},
		{"seccomp/kubelet/enforce", "containerd/2.4.2+crun/1.21", []func(Expectation) string{researched, sameAsDefault}},
		{"seccomp/kubelet/enforce", "containerd/2.4.2+runc/1.5.2", []func(Expectation) string{researched, sameAsDefault}},
		{"seccomp/kubelet/enforce", "cri-o/1.34.0+crun/1.21", []func(Expectation) string{researched, summary("ENOSYS"), dev(false)}},
		{"seccomp/kubelet/enforce", "cri-o/1.34.0", []func(Expectation) string{researched, summary("ENOSYS")}}, // runc and crun agree
		{"seccomp/kubelet/enforce", "containerd/1.6.30+runc/1.1.15", []func(Expectation) string{kepAlone("runtime containerd v1.6.30 with runc v1.1.15 not researched")}},
		{"seccomp/kubelet/enforce", "containerd/2.4.2+kata-runtime", []func(Expectation) string{kepAlone("not researched")}},
		{"seccomp/kubelet/enforce", "containerd/2.4.2+runc/1.2.6", []func(Expectation) string{kepAlone("not researched")}},
		{"seccomp/kubelet/enforce", "vendor-cri", []func(Expectation) string{kepAlone("runtime vendor-cri not researched")}},
		// Row 1: both outcomes allowed; each runtime's own account.
		{"seccomp/failure/row-1", "containerd/2.4.2", []func(Expectation) string{researched, sameAsDefault}},
		{"seccomp/failure/row-1", "cri-o/1.34.0", []func(Expectation) string{researched, summary("CRI-O runs a RuntimeDefault container without a profile")}},
		{"seccomp/failure/row-1", "vendor-cri", []func(Expectation) string{kepAlone("not researched")}},
		// Row 3: where the invalid action fails.
		{"seccomp/failure/row-3", "containerd/1.7.24+crun/1.21", []func(Expectation) string{researched, sameAsDefault}},
		{"seccomp/failure/row-3", "cri-o/1.34.0+runc/1.5.2", []func(Expectation) string{researched, reason("CreateContainerError"), dev(false)}},
		{"seccomp/failure/row-3", "cri-o/1.34.0+youki", []func(Expectation) string{kepAlone("not researched")}},
		// A node that names no runtime: containerd and CRI-O differ.
		{"seccomp/failure/row-3", "", []func(Expectation) string{kepAlone("the outcome differs between")}},
		// Row 4: the same on both CRI runtimes, whatever the OCI runtime.
		{"seccomp/failure/row-4", "cri-o/1.34.0+youki", []func(Expectation) string{researched, sameAsDefault}},
		{"seccomp/failure/row-4", "containerd/2.4.2+kata-runtime", []func(Expectation) string{researched, sameAsDefault}},
		{"seccomp/failure/row-4", "containerd/2.0.0", []func(Expectation) string{kepAlone("not researched")}},
		// AppArmor row 3: containerd names the profile, CRI-O's OCI runtime does not.
		{"apparmor/failure/row-3", "containerd/2.4.2+kata-runtime", []func(Expectation) string{researched, sameAsDefault}},
		{"apparmor/failure/row-3", "cri-o/1.34.0+crun/1.21", []func(Expectation) string{researched, reason("CreateContainerError"), dev(true)}},
		{"apparmor/failure/row-3", "cri-o/1.34.0+youki", []func(Expectation) string{kepAlone("not researched")}},
		// The RuntimeDefault AppArmor profile's name.
		{"apparmor/create/empty-annotation", "containerd/2.4.2+crun/1.21", []func(Expectation) string{researched, profile("cri-containerd.apparmor.d (enforce)")}},
		{"apparmor/create/empty-annotation", "cri-o/1.34.0+runc/1.1.15", []func(Expectation) string{researched, profile("crio-default (enforce)")}},
		// Not researched: the name is not asserted, confinement is (the
		// marker stays; observe matches it with ConfinedByRuntimeDefault).
		{"apparmor/create/empty-annotation", "cri-o/1.33.0+runc/1.1.15", []func(Expectation) string{profile(RuntimeDefaultMarker), func(e Expectation) string {
			if !strings.Contains(e.RuntimeNotResearched, "RuntimeDefault AppArmor profile of runtime cri-o v1.33.0") || e.Deviation {
				return "want the profile's name not researched: " + e.RuntimeNotResearched
			}
			return ""
		}}},
	} {
		e, err := Expect(c.id, release.MustParseVersion("1.37.2"), release.MustParseVersion("1.37.2"), host(t, c.runtime))
		if err != nil {
			t.Fatal(err)
		}
		for _, chk := range c.checks {
			if msg := chk(e); msg != "" {
				t.Errorf("%s on %q: %s", c.id, c.runtime, msg)
			}
		}
	}
}

// TestContainerdRuncUnchanged: stating skewproof's node runtime (Debian
// trixie's containerd 1.7.24 and runc 1.1.15) answers exactly as the
// default host, which names only containerd, at every version pair read.
func TestContainerdRuncUnchanged(t *testing.T) {
	stated := host(t, "containerd/1.7.24~ds1+runc/1.1.15+ds1")
	for _, a := range seccompRead {
		av := release.MustParseVersion(a)
		for _, k := range seccompRead {
			kv := release.MustParseVersion(k)
			if release.CheckSkew(av, kv) != nil {
				continue
			}
			for _, r := range Rules() {
				d, _ := Expect(r.ID, av, kv, DefaultHost)
				s, _ := Expect(r.ID, av, kv, stated)
				if !reflect.DeepEqual(d, s) {
					t.Fatalf("%s at %s/%s: containerd 1.7.24 + runc 1.1.15 answers\n%+v\nthe default host\n%+v", r.ID, a, k, s, d)
				}
				if d.RuntimeNotResearched != "" {
					t.Fatalf("%s at %s/%s on the default host: %s", r.ID, a, k, d.RuntimeNotResearched)
				}
			}
		}
	}
}

// TestRuntimeVariantsAreRead: every runtime window lies within the releases
// read (RuntimesRead), one read release's minor at a time, and cites the
// runtime's module and version.
func TestRuntimeVariantsAreRead(t *testing.T) {
	inRead := func(name string, w release.Window) bool {
		if w.OpenStart() || w.OpenEnd() || w.Until != (release.Minor{Major: w.From.Major, Minor: w.From.Minor + 1}) {
			return false
		}
		for _, rel := range RuntimesRead[name] {
			if m, _ := runtimeMinor(rel); m == w.From {
				return true
			}
		}
		return false
	}
	cite := map[string]string{Containerd: "containerd", CRIO: "cri-o@v1.34.0", Runc: "runc@v1.", Crun: "crun 1.21"}
	check := func(where string, vs []RuntimeVariant) {
		if len(vs) == 0 {
			t.Errorf("%s: no runtime variants", where)
		}
		for _, v := range vs {
			m := v.Match
			if !inRead(m.Runtime, m.Versions) {
				t.Errorf("%s: %s: the CRI runtime window is not a release read (%v)", where, m, RuntimesRead[m.Runtime])
			}
			if m.OCIRuntime != "" && !inRead(m.OCIRuntime, m.OCIVersions) {
				t.Errorf("%s: %s: the OCI runtime window is not a release read (%v)", where, m, RuntimesRead[m.OCIRuntime])
			}
			for _, n := range []string{m.Runtime, m.OCIRuntime} {
				if n != "" && !strings.Contains(v.Source, cite[n]) {
					t.Errorf("%s: %s: source does not cite %s: %s", where, m, cite[n], v.Source)
				}
			}
		}
	}
	n := 0
	for _, r := range Rules() {
		if len(r.Runtimes) > 0 {
			n++
			check(r.ID, r.Runtimes)
		}
		if len(r.Host.Runtimes) > 0 {
			t.Errorf("%s is restricted to runtimes %v: give it runtime variants instead", r.ID, r.Host.Runtimes)
		}
	}
	if n < 5 {
		t.Errorf("%d rules depend on the runtime, want at least 5", n)
	}
	check("runtimeDefaultAppArmor", runtimeDefaultAppArmor)
}

// TestSatisfiesNarrowedReason: a runtime that takes some of the waiting
// reasons the KEP allows does not deviate; another reason does.
func TestSatisfiesNarrowedReason(t *testing.T) {
	kep := Observation{Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError|RunContainerError|CrashLoopBackOff"}}
	for _, c := range []struct {
		up   ContainerOutcome
		want bool
	}{
		{ContainerOutcome{State: Waiting, Reason: "CreateContainerError|RunContainerError|CrashLoopBackOff"}, true},
		{ContainerOutcome{State: Waiting, Reason: "CreateContainerError"}, true},
		{ContainerOutcome{State: Waiting, Reason: "RunContainerError|CrashLoopBackOff"}, true},
		{ContainerOutcome{State: Waiting, Reason: "ContainerCreating"}, false},
		{ContainerOutcome{State: Waiting, Reason: "CreateContainerError|ContainerCreating"}, false},
		{ContainerOutcome{State: Waiting}, false},
		{ContainerOutcome{State: Running, Reason: "CreateContainerError"}, false},
		{ContainerOutcome{State: Waiting, Reason: "CreateContainerError", MessageContains: "apparmor"}, false},
	} {
		up := kep
		up.Container = &c.up
		if got := Satisfies(up, kep); got != c.want {
			t.Errorf("Satisfies(%s) = %v, want %v", describe(up), got, c.want)
		}
	}
	// The KEP's reason, narrowed the other way, is no narrowing.
	if Satisfies(kep, Observation{Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError"}}) {
		t.Error("an upstream reason with more alternatives than the KEP's satisfies it")
	}
}

// TestVerdictWhenRuntimeNotResearched: judged against the KEP alone, an
// observation that only an upstream runtime would explain fails; no
// deviation can excuse it.
func TestVerdictWhenRuntimeNotResearched(t *testing.T) {
	e, err := Expect("apparmor/failure/row-3", release.MustParseVersion("1.37.2"), release.MustParseVersion("1.37.2"), host(t, "cri-o/1.34.0+youki"))
	if err != nil {
		t.Fatal(err)
	}
	if e.RuntimeNotResearched == "" || e.Deviation || e.Verdict(false, true) != Fail || e.Verdict(true, true) != Pass {
		t.Errorf("not judged against the KEP alone: %+v", e)
	}
}

// Deviations on a runtime: CRI-O's unloaded-profile message is a deviation
// there and not on containerd; on a runtime nobody read, a rule with
// runtime variants claims none.
func TestDeviationsOnRuntime(t *testing.T) {
	has := func(ds []DeviationEntry, id string) bool {
		for _, d := range ds {
			if d.ID == id {
				return true
			}
		}
		return false
	}
	crio, err := ParseRuntime("cri-o/1.34.0")
	if err != nil {
		t.Fatal(err)
	}
	from, to := release.Minor{Major: 1, Minor: 36}, release.Minor{Major: 1, Minor: 37}
	if !has(DeviationsOn(from, to, crio), "apparmor/failure/row-3") {
		t.Error("CRI-O 1.34: apparmor/failure/row-3 is not listed as a deviation")
	}
	if has(Deviations(from, to), "apparmor/failure/row-3") {
		t.Error("containerd: apparmor/failure/row-3 is listed as a deviation")
	}
	unread, _ := ParseRuntime("containerd/1.7.24+youki/0.5")
	for _, d := range DeviationsOn(from, to, unread) {
		if r, _ := RuleByID(d.ID); len(r.Runtimes) > 0 {
			t.Errorf("%s: a deviation claimed on a runtime nobody read", d.ID)
		}
	}
}
