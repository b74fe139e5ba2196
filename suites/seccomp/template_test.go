package seccomp

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// KEP §Version Skew Strategy › PodTemplates.
var _ = Describe("[seccomp] pod templates", Label("seccomp", "template"), func() {
	h.SetUp()
	h.APIRule("seccomp/template/no-sync", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("nosync", fx.Annotation(skew.SeccompPodAnnotation, "runtime/default"))
		var subs []h.Sub
		for _, w := range fx.InertWorkloads("nosync", tmpl) {
			t.Warnings()
			stored, err := t.CreateWorkload(ctx, w.Object)
			o := observe.Observation{Warnings: t.Warnings()}
			if err != nil {
				o.Admission, o.Errors = skew.Rejected, []string{err.Error()}
			} else {
				o.Admission = skew.Accepted
				st, err := fx.TemplateOf(stored)
				Expect(err).NotTo(HaveOccurred())
				o.Object = h.TemplateAsPod(st)
			}
			subs = append(subs, h.Sub{Name: w.Kind, Obs: o, Want: h.RePrefix(w.TemplatePrefix)})
		}
		t.Judge(subs...)
	})

	h.APIRule("seccomp/template/instantiation", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("inst", fx.Unschedulable(), fx.Annotation(skew.SeccompPodAnnotation, "runtime/default"))
		_, err := t.CreateWorkload(ctx, fx.ReplicaSet("inst", 1, tmpl))
		Expect(err).NotTo(HaveOccurred(), "creating the ReplicaSet")
		pl, err := e2epod.WaitForPods(ctx, t.F.ClientSet, t.NS, metav1.ListOptions{LabelSelector: "skewproof.io/workload=inst"},
			e2epod.Range{MinFound: 1}, time.Minute, "exist", func(*corev1.Pod) bool { return true })
		Expect(err).NotTo(HaveOccurred(), "waiting for the ReplicaSet's pod")
		pod := &pl.Items[0]
		u, err := observe.ToUnstructured(pod)
		Expect(err).NotTo(HaveOccurred())
		t.Judge(h.Sub{Name: "pod of a ReplicaSet whose template has only the annotation", Obs: observe.Observation{Admission: skew.Accepted, Object: u}})
	})
})
