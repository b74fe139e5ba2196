// Package apitest gives tests of the profiles packages a fake dynamic
// client that knows the profile API's resources.
package apitest

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/skewproof/skewproof/profiles/api"
)

// NewDynamic returns a fake dynamic client holding objs (typed objects of
// the profile API, converted to unstructured).
func NewDynamic(t testing.TB, objs ...runtime.Object) *dynfake.FakeDynamicClient {
	t.Helper()
	var us []runtime.Object
	for _, o := range objs {
		u, err := api.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, u)
	}
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		api.SeccompProfiles:     "SeccompProfileList",
		api.AppArmorProfiles:    "AppArmorProfileList",
		api.ProfileNodeStatuses: "ProfileNodeStatusList",
		api.StaticPods:          "StaticPodList",
	}, us...)
}
