// Package observe holds what a spec observed on a cluster and compares it
// with an oracle observation (skew.Observation). It never decides what is
// expected: that comes from the oracle.
package observe

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// Container is the observed state of the scenario's container.
type Container struct {
	State skew.ContainerState
	// SeccompMode is the "Seccomp:" value of /proc/1/status; nil if not read.
	SeccompMode *int
	// AppArmorProfile is /proc/1/attr/current (e.g. "p (enforce)",
	// "unconfined"); "" when the kernel has no AppArmor or it was not read.
	AppArmorProfile string
	// Reason is the waiting reason (or the pod status reason).
	Reason string
	// Message holds the waiting message and the pod's event messages.
	Message string
	// Behaviour describes what the workload saw (e.g. "mkdir: EPERM").
	Behaviour string
	// Pod and Name locate a container that was observed running, so that
	// the effects of its profile can be probed (harness, effects.go).
	Pod, Name string
	// Effects are the profiles' effects probed in the container, by
	// behaviour (skew.ContainerOutcome.Effect).
	Effects []Effect
}

// Effect is the result of probing one profile's effect in a container.
type Effect struct {
	// Name is the effect probed (skew.Effect*).
	Name string
	// Shown: the container behaved as the profile makes it.
	Shown bool
	// Detail is what the probes did, e.g. "mkdir: Operation not permitted".
	Detail string
	// Unmade, when set, says why the effect could not be probed: the check
	// is not made (never a pass). UnmadeSetUp: what was missing is
	// skewproof's own doing (a control pod, a kernel log reader).
	Unmade      string
	UnmadeSetUp bool
}

// EffectOf returns the probe result of the named effect, if it was probed.
func (c Container) EffectOf(name string) (Effect, bool) {
	for _, e := range c.Effects {
		if e.Name == name {
			return e, true
		}
	}
	return Effect{}, false
}

func (e Effect) String() string {
	switch {
	case e.Unmade != "":
		return fmt.Sprintf("effect of %s not checked: %s", e.Name, e.Unmade)
	case e.Shown:
		return fmt.Sprintf("effect of %s shown: %s", e.Name, e.Detail)
	}
	return fmt.Sprintf("effect of %s NOT shown: %s", e.Name, e.Detail)
}

func (c Container) String() string {
	s := string(c.State)
	if c.SeccompMode != nil {
		s += fmt.Sprintf(", Seccomp: %d", *c.SeccompMode)
	}
	if c.AppArmorProfile != "" {
		s += ", AppArmor: " + c.AppArmorProfile
	}
	if c.Reason != "" {
		s += ", reason " + c.Reason
	}
	if c.Behaviour != "" {
		s += " (" + c.Behaviour + ")"
	}
	for _, e := range c.Effects {
		s += "; " + e.String()
	}
	return s
}

// Observation is what a spec saw.
type Observation struct {
	Admission skew.Admission
	// Errors are the API server's rejection messages, one per sub-case.
	Errors []string
	// Object is the stored object (a pod, or a pod template seen as a pod:
	// metadata and spec) in unstructured form; nil when nothing was stored.
	Object map[string]any
	// Warnings are the API server's warnings for the request.
	Warnings []string
	// Container is the observed container outcome, if any.
	Container *Container
	// ReadyMessage is the message of the node's Ready condition, when read.
	ReadyMessage *string
}

// Summary renders the observation as one line for reports.
func (o Observation) Summary() string {
	var parts []string
	if o.Admission != "" {
		parts = append(parts, string(o.Admission))
	}
	for _, e := range o.Errors {
		parts = append(parts, "error "+strconv.Quote(reports.FirstLine(e)))
	}
	if o.Object != nil {
		if a := annotationsOf(o.Object); len(a) > 0 {
			var kv []string
			for k, v := range a {
				if strings.Contains(k, "seccomp") || strings.Contains(k, "apparmor") {
					kv = append(kv, k+"="+v)
				}
			}
			sort.Strings(kv)
			if len(kv) > 0 {
				parts = append(parts, "annotations "+strings.Join(kv, ","))
			}
		}
	}
	if len(o.Warnings) > 0 {
		parts = append(parts, fmt.Sprintf("%d warning(s)", len(o.Warnings)))
	}
	if o.Container != nil {
		parts = append(parts, "container "+o.Container.String())
	}
	if o.ReadyMessage != nil {
		parts = append(parts, "Ready message "+strconv.Quote(*o.ReadyMessage))
	}
	return strings.Join(parts, "; ")
}

func annotationsOf(obj map[string]any) map[string]string {
	out := map[string]string{}
	md, _ := obj["metadata"].(map[string]any)
	an, _ := md["annotations"].(map[string]any)
	for k, v := range an {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

var segment = regexp.MustCompile(`^([A-Za-z0-9_]+)(?:\[(\d+)\])?$`)

// Lookup returns the value at a dotted path such as
// "spec.containers[0].securityContext.seccompProfile.type".
func Lookup(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, seg := range strings.Split(path, ".") {
		m := segment.FindStringSubmatch(seg)
		if m == nil {
			return nil, false
		}
		mp, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = mp[m[1]]
		if !ok || cur == nil {
			return nil, false
		}
		if m[2] != "" {
			i, _ := strconv.Atoi(m[2])
			l, ok := cur.([]any)
			if !ok || i >= len(l) {
				return nil, false
			}
			cur = l[i]
		}
	}
	return cur, true
}

// IsSecurityWarning reports whether a warning is about seccomp or AppArmor.
func IsSecurityWarning(w string) bool {
	l := strings.ToLower(w)
	return strings.Contains(l, "seccomp") || strings.Contains(l, "apparmor")
}

// Match lists every way got differs from want; none means it matches.
func Match(want skew.Observation, got Observation) []string {
	if want.NotApplicable != "" {
		return []string{"not applicable: " + want.NotApplicable}
	}
	var mis []string
	add := func(f string, a ...any) { mis = append(mis, fmt.Sprintf(f, a...)) }
	if want.Admission != "" && got.Admission != want.Admission {
		add("admission: want %s, got %s %s", want.Admission, orNone(string(got.Admission)), strings.Join(got.Errors, " / "))
	}
	for _, frag := range want.MessageContains {
		found := false
		for _, e := range got.Errors {
			if strings.Contains(e, frag) {
				found = true
			}
		}
		if !found {
			add("no rejection message contains %q (got %q)", frag, got.Errors)
		}
	}
	if len(want.Annotations)+len(want.AbsentAnnotations)+len(want.Fields)+len(want.AbsentFields) > 0 && got.Object == nil {
		add("no stored object to inspect")
	} else if got.Object != nil {
		ann := annotationsOf(got.Object)
		for _, k := range slices.Sorted(maps.Keys(want.Annotations)) {
			if v, ok := ann[k]; !ok || v != want.Annotations[k] {
				add("annotation %s: want %q, got %s", k, want.Annotations[k], present(v, ok))
			}
		}
		for _, k := range want.AbsentAnnotations {
			if v, ok := ann[k]; ok {
				add("annotation %s: want absent, got %q", k, v)
			}
		}
		for _, p := range slices.Sorted(maps.Keys(want.Fields)) {
			v, ok := Lookup(got.Object, p)
			if s := fmt.Sprint(v); !ok || s != want.Fields[p] {
				add("field %s: want %q, got %s", p, want.Fields[p], present(fmt.Sprint(v), ok))
			}
		}
		for _, p := range want.AbsentFields {
			if v, ok := Lookup(got.Object, p); ok {
				add("field %s: want unset, got %v", p, v)
			}
		}
	}
	if len(want.Warnings) > 0 {
		var sec []string
		for _, w := range got.Warnings {
			if IsSecurityWarning(w) {
				sec = append(sec, w)
			}
		}
		if !sameSet(want.Warnings, sec) {
			add("warnings: want %q, got %q", want.Warnings, sec)
		}
	}
	for _, frag := range want.WarningContains {
		found := false
		for _, w := range got.Warnings {
			if IsSecurityWarning(w) && strings.Contains(w, frag) {
				found = true
			}
		}
		if !found {
			add("no seccomp/AppArmor warning contains %q (got %q)", frag, got.Warnings)
		}
	}
	if want.NoWarnings {
		for _, w := range got.Warnings {
			if IsSecurityWarning(w) {
				add("want no seccomp/AppArmor warning, got %q", w)
			}
		}
	}
	if want.Container != nil {
		if got.Container == nil {
			add("container not observed")
		} else if m := MatchContainer(*want.Container, *got.Container); len(m) > 0 {
			mis = append(mis, m...)
		}
	}
	if len(want.AnyOf) > 0 {
		if got.Container == nil {
			add("container not observed")
		} else if WhichOf(want.AnyOf, *got.Container) < 0 {
			add("container %s matches none of the allowed outcomes", got.Container)
		}
	}
	if want.ReadyMessageContains != "" || want.ReadyMessageExcludes != "" {
		switch {
		case got.ReadyMessage == nil:
			add("the node's Ready message was not read")
		case want.ReadyMessageContains != "" && !strings.Contains(*got.ReadyMessage, want.ReadyMessageContains):
			add("Ready message: want it to contain %q, got %q", want.ReadyMessageContains, *got.ReadyMessage)
		case want.ReadyMessageExcludes != "" && strings.Contains(*got.ReadyMessage, want.ReadyMessageExcludes):
			add("Ready message: want no %q, got %q", want.ReadyMessageExcludes, *got.ReadyMessage)
		}
	}
	if len(want.Cases) > 0 {
		// Per-case outcomes apply to one container each: the spec selects
		// its case with ForCase before matching.
		add("the expectation has outcomes per case (%s); the observation names none", caseNames(want.Cases))
	}
	return mis
}

// ForCase narrows an expectation with per-case outcomes (Cases) to one case:
// its single outcome becomes Container, several become AnyOf. A case the
// oracle does not name leaves an outcome that nothing matches.
func ForCase(name string) func(skew.Observation) skew.Observation {
	return func(o skew.Observation) skew.Observation {
		var alts []skew.ContainerOutcome
		for _, c := range o.Cases {
			if c.Case == name {
				alts = append(alts, c)
			}
		}
		o.Cases, o.Container, o.AnyOf = nil, nil, nil
		switch {
		case o.NotApplicable != "":
		case len(alts) == 0:
			o.Container = &skew.ContainerOutcome{State: skew.ContainerState("(the oracle has no outcome for case " + name + ")")}
		case len(alts) == 1:
			o.Container = &alts[0]
		default:
			o.AnyOf = alts
		}
		return o
	}
}

func caseNames(cs []skew.ContainerOutcome) string {
	var names []string
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c.Case] {
			seen[c.Case] = true
			names = append(names, c.Case)
		}
	}
	return strings.Join(names, ", ")
}

// MatchContainer compares a container outcome.
func MatchContainer(want skew.ContainerOutcome, got Container) []string {
	var mis []string
	if want.State != got.State {
		mis = append(mis, fmt.Sprintf("container state: want %s, got %s", want.State, got))
		return mis
	}
	if want.SeccompMode != nil {
		if got.SeccompMode == nil {
			mis = append(mis, "Seccomp mode not observed")
		} else if *got.SeccompMode != *want.SeccompMode {
			mis = append(mis, fmt.Sprintf("Seccomp: want %d, got %d", *want.SeccompMode, *got.SeccompMode))
		}
	}
	switch {
	case want.AppArmorProfile == skew.RuntimeDefaultMarker:
		// A runtime whose default profile was not read: any name, but
		// confined in enforce mode (skew.ConfinedByRuntimeDefault).
		if !skew.ConfinedByRuntimeDefault(got.AppArmorProfile) {
			mis = append(mis, fmt.Sprintf("AppArmor: want the runtime's default profile in enforce mode (\"<name> (enforce)\", not unconfined nor one of skewproof's own), got %s",
				present(got.AppArmorProfile, got.AppArmorProfile != "")))
		}
	case want.AppArmorProfile != "" && got.AppArmorProfile != want.AppArmorProfile:
		mis = append(mis, fmt.Sprintf("AppArmor: want %q, got %s", want.AppArmorProfile, present(got.AppArmorProfile, got.AppArmorProfile != "")))
	}
	if want.Effect != "" {
		// Not probed is a mismatch; probed but not made is no mismatch
		// here: the harness stops the spec as unmade (UnmadeEffects).
		e, ok := got.EffectOf(want.Effect)
		switch {
		case !ok:
			// The harness probes only a running container whose state,
			// mode and label fit the outcome: here they did not, or the
			// container was not observed by the harness.
			mis = append(mis, fmt.Sprintf("the effect of %s was not probed (the container does not show this outcome's state, mode or label, or the harness did not observe it): a mode or a label alone proves only that some profile is in force", want.Effect))
		case e.Unmade == "" && !e.Shown:
			mis = append(mis, fmt.Sprintf("the effect of %s is not shown: %s", want.Effect, e.Detail))
		}
	}
	if want.Reason != "" && !oneOf(got.Reason, strings.Split(want.Reason, "|")) {
		mis = append(mis, fmt.Sprintf("reason: want one of %s, got %q", want.Reason, got.Reason))
	}
	if want.MessageContains != "" && !strings.Contains(got.Message, want.MessageContains) {
		mis = append(mis, fmt.Sprintf("message: want it to contain %q, got %q", want.MessageContains, got.Message))
	}
	return mis
}

// UnmadeEffects lists the effects probed in a container that could not be
// shown either way, and whether any of them is skewproof's own set-up.
func UnmadeEffects(c *Container) (reasons []string, setUp bool) {
	if c == nil {
		return nil, false
	}
	for _, e := range c.Effects {
		if e.Unmade != "" {
			reasons = append(reasons, e.Name+": "+e.Unmade)
			setUp = setUp || e.UnmadeSetUp
		}
	}
	return reasons, setUp
}

// WithoutEffect is an outcome with its effect left out: whether a
// container's mode, label and state make it a candidate for the outcome,
// before its effect is probed.
func WithoutEffect(o skew.ContainerOutcome) skew.ContainerOutcome {
	o.Effect = ""
	return o
}

// WhichOf returns the index of the first outcome got matches, or -1.
func WhichOf(outcomes []skew.ContainerOutcome, got Container) int {
	for i, o := range outcomes {
		if len(MatchContainer(o, got)) == 0 {
			return i
		}
	}
	return -1
}

func oneOf(s string, alts []string) bool {
	for _, a := range alts {
		if s == a {
			return true
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func present(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return strconv.Quote(v)
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
