package api

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNodeStatusName(t *testing.T) {
	if got := NodeStatusName("deny-mkdir", "t-worker"); got != "deny-mkdir-t-worker" {
		t.Errorf("short names: got %q", got)
	}
	long := strings.Repeat("p", 200)
	a, b := NodeStatusName(long, strings.Repeat("n", 100)), NodeStatusName(long, strings.Repeat("n", 101))
	for _, n := range []string{a, b} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
	}
	if a == b {
		t.Error("long names must stay distinct")
	}
}

func TestLabelValue(t *testing.T) {
	if LabelValue("t-worker") != "t-worker" {
		t.Error("a valid label value must stay as it is")
	}
	for _, s := range []string{strings.Repeat("x", 64), strings.Repeat("a.", 40) + "b", "-" + strings.Repeat("y", 70)} {
		v := LabelValue(s)
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q: %v", s, v, errs)
		}
	}
	if LabelValue(strings.Repeat("x", 64)) == LabelValue(strings.Repeat("x", 65)) {
		t.Error("hashed label values must stay distinct")
	}
}

func TestSelectors(t *testing.T) {
	if got := ProfileSelector(KindSeccompProfile, "deny"); got != "profiles.skewproof.io/kind=SeccompProfile,profiles.skewproof.io/profile=deny" {
		t.Errorf("ProfileSelector = %q", got)
	}
	if got := NodeSelector("w"); got != "profiles.skewproof.io/node=w" {
		t.Errorf("NodeSelector = %q", got)
	}
	if got := SeccompLocalhostProfile("ns", "deny"); got != "skewproof-profiles/ns/deny.json" {
		t.Errorf("SeccompLocalhostProfile = %q", got)
	}
}

func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"apparmorprofiles." + Group, "profilenodestatuses." + Group, "seccompprofiles." + Group, "staticpods." + Group}
	if len(crds) != len(want) {
		t.Fatalf("%d CRDs, want %d", len(crds), len(want))
	}
	for i, c := range crds {
		if c.GetName() != want[i] || c.GetKind() != "CustomResourceDefinition" {
			t.Errorf("CRD %d: %s %s", i, c.GetKind(), c.GetName())
		}
		plural, _, _ := strings.Cut(c.GetName(), ".")
		if p, _, _ := unstructuredString(c.Object, "spec", "names", "plural"); p != plural {
			t.Errorf("%s: plural %q", c.GetName(), p)
		}
		if g, _, _ := unstructuredString(c.Object, "spec", "group"); g != Group {
			t.Errorf("%s: group %q", c.GetName(), g)
		}
	}
}

// TestCRDShape pins what the markers on the types must produce: scope,
// names, the status subresource only where the status is written apart
// from the object, the printer columns and the immutability rules.
func TestCRDShape(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status     bool
		shortNames string
		columns    string
		rules      int
	}{
		"apparmorprofiles":    {true, "", "Status=.status.status LocalhostProfile=.status.localhostProfile Age=.metadata.creationTimestamp", 0},
		"profilenodestatuses": {false, "pns", "Profile=.profileName Node=.nodeName Status=.status Message=.message(1) Age=.metadata.creationTimestamp", 2},
		"seccompprofiles":     {true, "", "Status=.status.status LocalhostProfile=.status.localhostProfile Age=.metadata.creationTimestamp", 0},
		"staticpods":          {false, "", "Node=.spec.nodeName Age=.metadata.creationTimestamp", 1},
	}
	for _, c := range crds {
		plural, _, _ := strings.Cut(c.GetName(), ".")
		w, ok := want[plural]
		if !ok {
			t.Errorf("unexpected CRD %s", c.GetName())
			continue
		}
		if s, _, _ := unstructuredString(c.Object, "spec", "scope"); s != "Namespaced" {
			t.Errorf("%s: scope %q", plural, s)
		}
		if c.GetLabels()["app.kubernetes.io/part-of"] != "skewproof" {
			t.Errorf("%s: labels %v", plural, c.GetLabels())
		}
		spec := c.Object["spec"].(map[string]any)
		names := spec["names"].(map[string]any)
		if got := fmt.Sprint(names["categories"]); got != "[skewproof]" {
			t.Errorf("%s: categories %s", plural, got)
		}
		if got, _ := names["shortNames"].([]any); fmt.Sprint(got...) != w.shortNames {
			t.Errorf("%s: shortNames %v", plural, got)
		}
		versions := spec["versions"].([]any)
		if len(versions) != 1 {
			t.Fatalf("%s: %d versions", plural, len(versions))
		}
		v := versions[0].(map[string]any)
		if v["name"] != Version || v["served"] != true || v["storage"] != true {
			t.Errorf("%s: version %v served %v storage %v", plural, v["name"], v["served"], v["storage"])
		}
		sub, _ := v["subresources"].(map[string]any)
		if _, has := sub["status"]; has != w.status || sub["scale"] != nil {
			t.Errorf("%s: subresources %v", plural, sub)
		}
		var cols []string
		for _, col := range v["additionalPrinterColumns"].([]any) {
			m := col.(map[string]any)
			col := fmt.Sprintf("%s=%s", m["name"], m["jsonPath"])
			if p, ok := m["priority"]; ok {
				col += fmt.Sprintf("(%v)", p)
			}
			cols = append(cols, col)
		}
		if got := strings.Join(cols, " "); got != w.columns {
			t.Errorf("%s: printer columns %s, want %s", plural, got, w.columns)
		}
		root := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		rules, _ := root["x-kubernetes-validations"].([]any)
		if specSchema, ok := root["properties"].(map[string]any)["spec"].(map[string]any); ok {
			r, _ := specSchema["x-kubernetes-validations"].([]any)
			rules = append(rules, r...)
		}
		if len(rules) != w.rules {
			t.Errorf("%s: %d validation rules, want %d", plural, len(rules), w.rules)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	p := Profile{Kind: KindSeccompProfile, Namespace: "ns", Name: "deny", UID: "u-1", Generation: 2}
	ns := p.NewNodeStatus("w", Failed, "permission denied")
	u, err := ToUnstructured(ns)
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != KindProfileNodeStatus || u.GetAPIVersion() != "profiles.skewproof.io/v1alpha1" || u.GetName() != "deny-w" {
		t.Fatalf("got %s %s %s", u.GetAPIVersion(), u.GetKind(), u.GetName())
	}
	if u.GetLabels()[LabelProfile] != "deny" || u.GetLabels()[LabelNode] != "w" || u.GetOwnerReferences()[0].UID != "u-1" {
		t.Fatalf("labels %v owners %v", u.GetLabels(), u.GetOwnerReferences())
	}
	var back ProfileNodeStatus
	if err := FromUnstructured(u, &back); err != nil {
		t.Fatal(err)
	}
	if back.NodeName != "w" || back.Status != Failed || back.Message != "permission denied" || back.ProfileGeneration != 2 {
		t.Fatalf("round trip: %+v", back)
	}

	sp := &SeccompProfile{ObjectMeta: metav1.ObjectMeta{Name: "deny", Namespace: "ns", UID: "u-2"}, Spec: SeccompProfileSpec{Content: "{}"},
		Status: ProfileStatus{Status: Installed, Nodes: map[Status]int32{Installed: 2}}}
	su, err := ToUnstructured(sp)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := ProfileFromUnstructured(su)
	if err != nil || pr.Content != "{}" || pr.Status.Nodes[Installed] != 2 || pr.LocalhostProfile() != "skewproof-profiles/ns/deny.json" {
		t.Fatalf("ProfileFromUnstructured: %+v, %v", pr, err)
	}
	ap := &AppArmorProfile{ObjectMeta: metav1.ObjectMeta{Name: "k8s-deny-write"}, Spec: AppArmorProfileSpec{Policy: "profile k8s-deny-write {}"}}
	au, _ := ToUnstructured(ap)
	if pr, _ := ProfileFromUnstructured(au); pr.LocalhostProfile() != "k8s-deny-write" || pr.Content != ap.Spec.Policy {
		t.Fatalf("AppArmor: %+v", pr)
	}
}

func TestDeepCopyAndScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{KindSeccompProfile, KindAppArmorProfile, KindProfileNodeStatus, KindSeccompProfile + "List", KindStaticPod, KindStaticPod + "List"} {
		if !s.Recognizes(GroupVersion.WithKind(k)) {
			t.Errorf("scheme does not know %s", k)
		}
	}
	l := &SeccompProfileList{Items: []SeccompProfile{{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
		Status: ProfileStatus{NotReady: []string{"n"}}}}}
	c := l.DeepCopyObject().(*SeccompProfileList)
	c.Items[0].Labels["a"] = "c"
	c.Items[0].Status.NotReady[0] = "m"
	if l.Items[0].Labels["a"] != "b" || l.Items[0].Status.NotReady[0] != "n" {
		t.Error("DeepCopy shares memory")
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

func TestStaticPod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static", Namespace: "apparmor-1",
		Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/c": "localhost/p"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	sp, err := StaticPodObject("skewproof-fixtures", "static-apparmor-1", "w", pod)
	if err != nil {
		t.Fatal(err)
	}
	u, err := ToUnstructured(sp)
	if err != nil || u.GetKind() != KindStaticPod {
		t.Fatalf("ToUnstructured: %v %v", u, err)
	}
	p, node, err := StaticPodFromUnstructured(u)
	if err != nil || node != "w" || p.Kind != KindStaticPod || p.Name != "static-apparmor-1" || p.Namespace != "skewproof-fixtures" {
		t.Fatalf("StaticPodFromUnstructured: %+v %q %v", p, node, err)
	}
	back, err := ParseStaticPodManifest(p.Content)
	if err != nil {
		t.Fatal(err)
	}
	if back.Name != "static" || back.Namespace != "apparmor-1" || back.Annotations["container.apparmor.security.beta.kubernetes.io/c"] != "localhost/p" ||
		back.APIVersion != "v1" || back.Kind != "Pod" {
		t.Errorf("manifest round trip: %+v", back)
	}
	if pod.APIVersion != "" {
		t.Error("StaticPodObject changed the pod it was given")
	}
	for manifest, want := range map[string]string{
		"":                                      "want a v1 Pod",
		"apiVersion: v1\nkind: ConfigMap\n":     "want a v1 Pod",
		"apiVersion: v1\nkind: Pod\n":           "no metadata.name",
		"apiVersion: v1\nkind: Pod\nspec: []\n": "not a valid Pod",
		"apiVersion: v1\nkind: Pod\nspek: {}\n": "not a valid Pod",
		"{":                                     "not YAML or JSON",
	} {
		if _, err := ParseStaticPodManifest(manifest); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseStaticPodManifest(%q) = %v, want an error with %q", manifest, err, want)
		}
	}
	if _, err := StaticPodObject("ns", "Bad_Name", "w", pod); err == nil {
		t.Error("StaticPodObject accepted an invalid name")
	}
	if f := StaticPodFile("skewproof-fixtures", "s.1"); f != "skewproof.skewproof-fixtures.s.1.yaml" || !strings.HasPrefix(f, StaticPodFilePrefix("skewproof-fixtures")) {
		t.Errorf("StaticPodFile = %q", f)
	}
	if strings.HasPrefix(StaticPodFile("skewproof-fixtures", "x"), StaticPodFilePrefix("skewproof")) {
		t.Error("the file prefix of namespace skewproof covers the files of skewproof-fixtures")
	}
}
