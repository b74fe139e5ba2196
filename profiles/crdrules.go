package profiles

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
)

// validationRulesMinor is the first minor release whose API servers enforce
// a CRD's x-kubernetes-validations (CEL) rules by default: the field came
// in v1.23 behind the alpha gate CustomResourceValidationExpressions (off:
// the rules are dropped), beta and on from v1.25. A v1.22 or older server
// refuses the field altogether ("field not declared in schema").
const validationRulesMinor = 25

// serverMinor is the API server's minor version (e.g. 19 for v1.19.16).
func serverMinor(d discovery.ServerVersionInterface) (int, error) {
	v, err := d.ServerVersion()
	if err != nil {
		return 0, fmt.Errorf("asking the API server its version: %w", err)
	}
	m, err := strconv.Atoi(strings.TrimSuffix(v.Minor, "+"))
	if err != nil {
		return 0, fmt.Errorf("API server minor version %q: %w", v.Minor, err)
	}
	return m, nil
}

// withoutValidationRules removes every x-kubernetes-validations of the
// CRD's schemas, for an API server before validationRulesMinor, which
// would refuse or drop them: there the agent's objects are not guarded by
// the rules (the immutability of their node and profile names), which
// only the agent and skewproof write.
func withoutValidationRules(crd *unstructured.Unstructured) *unstructured.Unstructured {
	out := crd.DeepCopy()
	var strip func(v any)
	strip = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			delete(t, "x-kubernetes-validations")
			for _, c := range t {
				strip(c)
			}
		case []any:
			for _, c := range t {
				strip(c)
			}
		}
	}
	strip(out.Object)
	return out
}
