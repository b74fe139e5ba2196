package harness

import (
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// These tests need no cluster: they check how sub-case expectations are
// derived from the oracle's observation.

func TestSubWantSplitsMessagesPerSubCase(t *testing.T) {
	o := skew.Observation{Admission: skew.Rejected, MessageContains: []string{"first", "second"}}
	s := Sub{}
	if got := s.want(o, 1, 2).MessageContains; len(got) != 1 || got[0] != "second" {
		t.Errorf("sub-case 1 of 2: %q", got)
	}
	if got := s.want(o, 0, 3).MessageContains; len(got) != 2 {
		t.Errorf("fragments must not be split when the counts differ: %q", got)
	}
}

func TestGenericDropsCanonicalValues(t *testing.T) {
	o := skew.Observation{Admission: skew.Accepted, Fields: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"},
		Warnings: []string{"w"}, AbsentFields: []string{"x"}}
	g := Generic(o)
	if g.Fields != nil || g.Annotations != nil || g.Warnings != nil || g.Admission != skew.Accepted || len(g.AbsentFields) != 1 {
		t.Errorf("generic = %+v", g)
	}
}

func TestRePrefixAndLabels(t *testing.T) {
	w := skew.SeccompAnnotationWarning("spec.template.", skew.SeccompPodAnnotation)
	got := RePrefix("spec.jobTemplate.spec.template.")(skew.Observation{Warnings: []string{w}}).Warnings[0]
	if got != skew.SeccompAnnotationWarning("spec.jobTemplate.spec.template.", skew.SeccompPodAnnotation) {
		t.Errorf("rePrefix = %q", got)
	}
	ls := SpecLabels("seccomp/failure/row-2", &Node{Name: "w1"})
	want := map[string]bool{"seccomp": true, "LinuxOnly": true, "seccomp-failure-row-2": true, "failure-row-2": true, "kubelet": true, "node:w1": true}
	for _, l := range ls {
		delete(want, l)
	}
	if len(want) != 0 {
		t.Errorf("labels %q lack %v", ls, want)
	}
	for _, r := range skew.Rules() {
		{
			for _, l := range SpecLabels(r.ID, nil) {
				for _, c := range "&|!,()/" {
					for _, lc := range l {
						if lc == c {
							t.Errorf("label %q of %s has %q, which Ginkgo forbids", l, r.ID, c)
						}
					}
				}
			}
		}
	}
}
