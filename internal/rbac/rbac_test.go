package rbac

import (
	"reflect"
	"testing"
)

// Rules on the same objects become one, with the union of their verbs in
// the usual order and each reason once; rules on other objects stay apart.
func TestMerge(t *testing.T) {
	got := Merge(
		[]Rule{Core([]string{"pods"}, nil, "a; b", "delete", "get"), Core([]string{"pods"}, []string{"x"}, "named", "get")},
		[]Rule{Core([]string{"pods"}, nil, "b", "create", "get"), New([]string{"apps"}, []string{"pods"}, nil, "apps", "get")},
	)
	want := []Rule{
		Core([]string{"pods"}, nil, "a; b", "get", "create", "delete"),
		Core([]string{"pods"}, []string{"x"}, "named", "get"),
		New([]string{"apps"}, []string{"pods"}, nil, "apps", "get"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %+v\nwant %+v", got, want)
	}
	p := Policy(got)
	for _, c := range []struct {
		verb, group, resource, name string
		want                        bool
	}{
		{"create", "", "pods", "", true},
		{"update", "", "pods", "", false},
		{"get", "", "pods", "y", true},
		{"get", "apps", "pods", "", true},
		{"delete", "apps", "pods", "", false},
	} {
		if Allows(p, c.verb, c.group, c.resource, c.name) != c.want {
			t.Errorf("Allows(%s %s/%s %q) = %v", c.verb, c.group, c.resource, c.name, !c.want)
		}
	}
	named := Policy([]Rule{Core([]string{"secrets"}, []string{"x"}, "", "get")})
	if Allows(named, "get", "", "secrets", "") || !Allows(named, "get", "", "secrets", "x") || Allows(named, "get", "", "secrets", "y") {
		t.Error("a rule restricted by name")
	}
}
