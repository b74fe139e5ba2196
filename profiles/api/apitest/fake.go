// Package apitest gives tests of the profiles packages a fake dynamic
// client that knows the profile API's resources, and a way to run a
// controller (the agent, the aggregator) in the background.
package apitest

import (
	"context"
	"testing"
	"time"

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

// Background runs run (a controller's Run) in a goroutine. The stop it
// returns calls cancel, which must end run's context, and fails the test
// unless run then returns nil within five seconds.
func Background(t testing.TB, cancel context.CancelFunc, run func() error) (stop func()) {
	done := make(chan error, 1)
	go func() { done <- run() }()
	return func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after the context ended")
		}
	}
}
