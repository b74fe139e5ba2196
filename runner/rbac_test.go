package runner

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
)

// TestRulesHaveNoWildcard fails on a wildcard anywhere and lists what the
// ClusterRole holds, per resource, for review.
func TestRulesHaveNoWildcard(t *testing.T) {
	held := map[string][]string{}
	for i, r := range ExplainedRules() {
		if r.Why == "" {
			t.Errorf("rule %d (%v) does not say why it is needed", i, r.PolicyRule)
		}
		if len(r.Verbs) == 0 || len(r.Resources) == 0 && len(r.NonResourceURLs) == 0 {
			t.Errorf("rule %d grants nothing: %+v", i, r.PolicyRule)
		}
		for field, vals := range map[string][]string{"verbs": r.Verbs, "apiGroups": r.APIGroups, "resources": r.Resources,
			"resourceNames": r.ResourceNames, "nonResourceURLs": r.NonResourceURLs} {
			for _, v := range vals {
				if strings.Contains(v, "*") {
					t.Errorf("rule %d has a wildcard in %s: %q", i, field, v)
				}
			}
		}
		for _, v := range r.Verbs {
			if v == "escalate" || v == "bind" || v == "impersonate" {
				t.Errorf("rule %d has verb %s: the runner holds what it grants instead", i, v)
			}
		}
		for _, res := range r.Resources {
			for _, g := range r.APIGroups {
				key := res
				if g != "" {
					key = res + "." + g
				}
				v := strings.Join(r.Verbs, ",")
				if len(r.ResourceNames) > 0 {
					v += " (names " + strings.Join(r.ResourceNames, ",") + ")"
				}
				held[key] = append(held[key], v)
			}
		}
		for _, u := range r.NonResourceURLs {
			held[u] = append(held[u], strings.Join(r.Verbs, ","))
		}
	}
	keys := make([]string, 0, len(held))
	for k := range held {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-52s %s", k, strings.Join(held[k], "; "))
	}
}

// allows says whether the rules allow verb on group/resource (named name,
// "" for a request without a name).
func allows(rules []rbacv1.PolicyRule, verb, group, resource, name string) bool {
	for _, r := range rules {
		if slices.Contains(r.Verbs, verb) && slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
			(len(r.ResourceNames) == 0 || name != "" && slices.Contains(r.ResourceNames, name)) {
			return true
		}
	}
	return false
}

// TestRulesCoverWhatTheRunGrants checks that the runner holds every
// permission it grants the node agent (so that creating the agent's roles
// and bindings needs neither escalate nor bind) and may apply (patch and
// create by name) and remove the agent's objects in both agent namespaces.
func TestRulesCoverWhatTheRunGrants(t *testing.T) {
	rules := Rules()
	for _, ns := range agentNamespaces() {
		objs, err := agent.Objects(agent.DeployOptions{Namespace: ns, Image: "unused", OwnNodePolicy: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			gr, name := o.Resource, o.Object.GetName()
			for _, verb := range []string{"patch", "create"} {
				if !allows(rules, verb, gr.Group, gr.Resource, name) {
					t.Errorf("server-side apply of %s %s/%s needs %s", gr.Resource, ns, name, verb)
				}
			}
			if !o.Namespaced() && !allows(rules, "delete", gr.Group, gr.Resource, name) {
				t.Errorf("the teardown deletes %s %s", gr.Resource, name)
			}
			var granted []rbacv1.PolicyRule
			switch o.Object.GetKind() {
			case "Role", "ClusterRole":
				b, _ := o.Object.MarshalJSON()
				var role rbacv1.ClusterRole
				if err := yaml.Unmarshal(b, &role); err != nil {
					t.Fatal(err)
				}
				granted = role.Rules
			}
			for _, g := range granted {
				for _, grp := range g.APIGroups {
					for _, res := range g.Resources {
						for _, v := range g.Verbs {
							if !allows(rules, v, grp, res, "") {
								t.Errorf("%s %s grants %s on %s.%s, which the runner does not hold (it would need escalate)", o.Object.GetKind(), name, v, res, grp)
							}
						}
					}
				}
			}
		}
	}
	for _, n := range crdNames() {
		for _, v := range []string{"get", "create", "patch", "delete"} {
			if !allows(rules, v, "apiextensions.k8s.io", "customresourcedefinitions", n) {
				t.Errorf("CRD %s: no %s", n, v)
			}
		}
	}
}

// TestProfilesSuiteNamespace keeps ProfilesSuiteNamespace equal to the
// profiles suite's constant (the runner does not import the suites).
func TestProfilesSuiteNamespace(t *testing.T) {
	b, err := os.ReadFile("../suites/profiles/suite.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const Namespace = "([^"]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no 'const Namespace' in suites/profiles/suite.go")
	}
	if string(m[1]) != ProfilesSuiteNamespace {
		t.Errorf("ProfilesSuiteNamespace = %q, suites/profiles.Namespace = %q", ProfilesSuiteNamespace, m[1])
	}
	if profiles.FixturesNamespace == ProfilesSuiteNamespace {
		t.Error("the two agent namespaces must differ")
	}
}

// TestManifestsParse checks that the manifests parse back into the objects
// they describe.
func TestManifestsParse(t *testing.T) {
	b, err := Manifests("conformance", "vendor-runner")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(b, []byte("\n---\n"))
	if len(docs) != 3 {
		t.Fatalf("want 3 documents, got %d", len(docs))
	}
	var sa corev1.ServiceAccount
	var cr rbacv1.ClusterRole
	var crb rbacv1.ClusterRoleBinding
	for i, into := range []any{&sa, &cr, &crb} {
		if err := yaml.UnmarshalStrict(docs[i], into); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, docs[i])
		}
	}
	if sa.Kind != "ServiceAccount" || sa.Name != "vendor-runner" || sa.Namespace != "conformance" {
		t.Errorf("service account = %+v", sa.ObjectMeta)
	}
	if cr.Kind != "ClusterRole" || cr.Name != ClusterRoleName || fmt.Sprint(cr.Rules) != fmt.Sprint(Rules()) {
		t.Errorf("cluster role %s does not hold Rules()", cr.Name)
	}
	want := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName}
	if crb.Kind != "ClusterRoleBinding" || crb.RoleRef != want ||
		len(crb.Subjects) != 1 || crb.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "vendor-runner", Namespace: "conformance"}) {
		t.Errorf("binding = %+v %+v", crb.RoleRef, crb.Subjects)
	}
	if bytes.Contains(b, []byte("creationTimestamp")) {
		t.Error("manifests carry creationTimestamp")
	}
	def, err := Manifests("", "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(def, []byte("namespace: "+DefaultServiceAccountNamespace)) {
		t.Error("the default namespace is not used")
	}
}

// rulesTable renders ExplainedRules as the Markdown table of docs/rbac.md.
func rulesTable() string {
	code := func(vals []string) string {
		var out []string
		for _, v := range vals {
			if v == "" {
				v = `""`
			}
			out = append(out, "`"+v+"`")
		}
		return strings.Join(out, ", ")
	}
	var b strings.Builder
	b.WriteString("| API group | resources | names | verbs | needed by |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range ExplainedRules() {
		group, res, names := code(r.APIGroups), code(r.Resources), "any"
		if len(r.NonResourceURLs) > 0 {
			group, res, names = "(not a resource)", code(r.NonResourceURLs), "-"
		} else if len(r.ResourceNames) > 0 {
			names = code(r.ResourceNames)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", group, res, names, strings.Join(r.Verbs, ", "), r.Why)
	}
	return b.String()
}

// TestRBACDocIsCurrent keeps the table of docs/rbac.md equal to the rules.
func TestRBACDocIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../docs/rbac.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := rulesTable(); !strings.Contains(string(doc), want) {
		if os.Getenv("SKEWPROOF_UPDATE_DOCS") != "" {
			t.Logf("the table is:\n%s", want)
		}
		t.Errorf("the rules table of docs/rbac.md is stale; SKEWPROOF_UPDATE_DOCS=1 go test ./runner -run TestRBACDocIsCurrent -v prints the current one")
	}
}
