package profiles

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/skewproof/skewproof/profiles/api"
)

// The CRDs lose every validation rule, and only the copy does.
func TestWithoutValidationRules(t *testing.T) {
	crds, err := api.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	had := 0
	for _, crd := range crds {
		before, _ := json.Marshal(crd.Object)
		if strings.Contains(string(before), "x-kubernetes-validations") {
			had++
		}
		after, _ := json.Marshal(withoutValidationRules(crd).Object)
		if strings.Contains(string(after), "x-kubernetes-validations") || !strings.Contains(string(after), "openAPIV3Schema") {
			t.Errorf("%s: rules left or schema lost", crd.GetName())
		}
		if again, _ := json.Marshal(crd.Object); string(again) != string(before) {
			t.Errorf("%s: the original was changed", crd.GetName())
		}
	}
	if had == 0 {
		t.Fatal("no CRD has validation rules: the test proves nothing")
	}
}

func TestServerMinor(t *testing.T) {
	cs := fake.NewSimpleClientset()
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{Major: "1", Minor: "19+"}
	if m, err := serverMinor(cs.Discovery()); err != nil || m != 19 {
		t.Errorf("serverMinor = %d, %v", m, err)
	}
}
