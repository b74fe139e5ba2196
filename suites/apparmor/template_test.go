package apparmor

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

// KEP-24 §Version Skew Strategy › PodTemplates, › Warnings.
var _ = Describe("[apparmor] pod templates", Label("apparmor", "template"), func() {
	h.SetUp()
	h.APIRule("apparmor/template/no-sync", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("nosync", fx.PodAppArmor(fx.LocalhostAppArmor(profile)), fx.Annotation(ctrAnn, "localhost/"+profile))
		var subs []h.Sub
		for _, w := range fx.InertWorkloads("nosync", tmpl) {
			subs = append(subs, h.Sub{Name: w.Kind, Obs: t.ObserveWorkload(ctx, w.Object), Want: h.RePrefix(w.TemplatePrefix)})
		}
		t.Judge(subs...)
	})

	h.APIRule("apparmor/template/instantiation", func(ctx context.Context, t *h.Scenario) {
		tmpl := fx.Template("inst", fx.Unschedulable(), fx.Annotation(ctrAnn, "localhost/"+profile))
		_, err := t.CreateWorkload(ctx, fx.ReplicaSet("inst", 1, tmpl))
		Expect(err).NotTo(HaveOccurred(), "creating the ReplicaSet")
		pl, err := e2epod.WaitForPods(ctx, t.F.ClientSet, t.NS, metav1.ListOptions{LabelSelector: "skewproof.io/workload=inst"},
			e2epod.Range{MinFound: 1}, time.Minute, "exist", func(*corev1.Pod) bool { return true })
		Expect(err).NotTo(HaveOccurred(), "waiting for the ReplicaSet's pod")
		u, err := observe.ToUnstructured(&pl.Items[0])
		Expect(err).NotTo(HaveOccurred())
		t.Judge(h.Sub{Name: "pod of a ReplicaSet whose template has only the annotation", Obs: observe.Observation{Admission: skew.Accepted, Object: u}})
	})
})
