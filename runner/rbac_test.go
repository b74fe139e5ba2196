package runner

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	senv "github.com/skewproof/skewproof/suites/env"
)

// declarationsFile holds what the suite binary declares; suites/e2e's
// TestBinaryDeclaresTheSuitesNeeds keeps it equal to the real binary's
// declarations (the runner does not link the suites).
const declarationsFile = "../suites/e2e/testdata/declarations.json"

// declared are the suite binary's declarations and the rules of a run of
// all its suites.
func declared(t *testing.T) ([]senv.Suite, []rbac.Rule) {
	t.Helper()
	decls, err := senv.ReadSuites(declarationsFile)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := ExplainedRules(decls)
	if err != nil {
		t.Fatal(err)
	}
	return decls, rules
}

// TestRulesHaveNoWildcard fails on a wildcard anywhere and lists what the
// ClusterRole holds, per resource, for review.
func TestRulesHaveNoWildcard(t *testing.T) {
	held := map[string][]string{}
	_, rules := declared(t)
	for i, r := range rules {
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

// TestRulesCoverWhatTheRunGrants checks that the runner holds every
// permission it grants the node agent (so that creating the agent's roles
// and bindings needs neither escalate nor bind) and may apply (patch and
// create by name) and remove the agent's objects, in the fixtures
// namespace and in the namespace of each suite that deploys its own agent
// (it declares the agent's service account in some namespace).
func TestRulesCoverWhatTheRunGrants(t *testing.T) {
	decls, _ := declared(t)
	for _, d := range decls {
		rules, err := ExplainedRules([]senv.Suite{d})
		if err != nil {
			t.Fatal(err)
		}
		policy := rbac.Policy(rules)
		namespaces := []string{}
		if slices.Contains(d.Fixtures, senv.FixtureSeccompProfiles) {
			namespaces = append(namespaces, profiles.FixturesNamespace)
		}
		for _, p := range d.Permissions {
			if slices.Contains(p.Resources, "namespaces") && len(p.ResourceNames) > 0 {
				namespaces = append(namespaces, p.ResourceNames...)
			}
		}
		for _, ns := range namespaces {
			objs, err := agent.Objects(agent.DeployOptions{Namespace: ns, Image: "unused", OwnNodePolicy: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				gr, name := o.Resource, o.Object.GetName()
				for _, verb := range []string{"patch", "create"} {
					if !rbac.Allows(policy, verb, gr.Group, gr.Resource, name) {
						t.Errorf("suite %s: server-side apply of %s %s/%s needs %s", d.Family, gr.Resource, ns, name, verb)
					}
				}
				if !o.Namespaced() && !rbac.Allows(policy, "delete", gr.Group, gr.Resource, name) {
					t.Errorf("suite %s: the teardown deletes %s %s", d.Family, gr.Resource, name)
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
								if !rbac.Allows(policy, v, grp, res, "") {
									t.Errorf("suite %s: %s %s grants %s on %s.%s, which the runner does not hold (it would need escalate)", d.Family, o.Object.GetKind(), name, v, res, grp)
								}
							}
						}
					}
				}
			}
			crds, err := api.CRDs()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range crds {
				for _, v := range []string{"get", "create", "patch", "delete"} {
					if !rbac.Allows(policy, v, "apiextensions.k8s.io", "customresourcedefinitions", c.GetName()) {
						t.Errorf("suite %s: CRD %s: no %s", d.Family, c.GetName(), v)
					}
				}
			}
		}
	}
}

// A run's ClusterRole is that of the suites it runs: a suite left out
// takes its permissions with it, the runner's own stay, and a suite that
// needs no fixtures gets no fixtures' agent.
func TestRulesAreThoseOfTheDeclaredSuites(t *testing.T) {
	decls := []senv.Suite{
		{Family: "a", Permissions: []rbac.Rule{rbac.Core([]string{"pods"}, nil, "a's pods", "create"), rbac.Core([]string{"nodes/proxy"}, nil, "a's proxy", "get")}},
		{Family: "b", Fixtures: []string{senv.FixtureRuntimeClasses}, Permissions: []rbac.Rule{rbac.Core([]string{"pods"}, nil, "b's pods", "create", "delete")}},
	}
	one, err := ExplainedRules(decls[:1])
	if err != nil {
		t.Fatal(err)
	}
	p := rbac.Policy(one)
	if !rbac.Allows(p, "get", "", "nodes/proxy", "") || !rbac.Allows(p, "create", "", "pods", "") || rbac.Allows(p, "delete", "", "pods", "") {
		t.Errorf("suite a alone: %+v", one)
	}
	if !rbac.Allows(p, "list", "", "nodes", "") || !rbac.Allows(p, "delete", "", "namespaces", "") {
		t.Errorf("the runner's own rules are missing: %+v", one)
	}
	if rbac.Allows(p, "create", "node.k8s.io", "runtimeclasses", "") || rbac.Allows(p, "create", "apiextensions.k8s.io", "customresourcedefinitions", "seccompprofiles.profiles.skewproof.io") {
		t.Errorf("suite a declares no fixture, yet: %+v", one)
	}
	both, err := ExplainedRules(decls)
	if err != nil {
		t.Fatal(err)
	}
	p = rbac.Policy(both)
	if !rbac.Allows(p, "delete", "", "pods", "") || !rbac.Allows(p, "create", "node.k8s.io", "runtimeclasses", "") {
		t.Errorf("suites a and b: %+v", both)
	}
	for _, r := range both {
		if slices.Contains(r.Resources, "pods") && len(r.Resources) == 1 && !strings.Contains(r.Why, "a's pods") || strings.Contains(r.Why, "b's pods") && !strings.Contains(r.Why, "a's pods") {
			t.Errorf("the two suites' pods rules were not merged into one: %+v", r)
		}
	}
}

// TestManifestsParse checks that the manifests parse back into the objects
// they describe.
func TestManifestsParse(t *testing.T) {
	_, rules := declared(t)
	b, err := Manifests("conformance", "vendor-runner", rules)
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
	if cr.Kind != "ClusterRole" || cr.Name != ClusterRoleName || fmt.Sprint(cr.Rules) != fmt.Sprint(rbac.Policy(rules)) {
		t.Errorf("cluster role %s does not hold the rules", cr.Name)
	}
	want := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName}
	if crb.Kind != "ClusterRoleBinding" || crb.RoleRef != want ||
		len(crb.Subjects) != 1 || crb.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "vendor-runner", Namespace: "conformance"}) {
		t.Errorf("binding = %+v %+v", crb.RoleRef, crb.Subjects)
	}
	if bytes.Contains(b, []byte("creationTimestamp")) {
		t.Error("manifests carry creationTimestamp")
	}
	def, err := Manifests("", "", rules)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(def, []byte("namespace: "+DefaultServiceAccountNamespace)) {
		t.Error("the default namespace is not used")
	}
}

// rulesTable renders rules as the Markdown table of docs/rbac.md.
func rulesTable(rules []rbac.Rule) string {
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
	for _, r := range rules {
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
	_, rules := declared(t)
	if want := rulesTable(rules); !strings.Contains(string(doc), want) {
		if os.Getenv("SKEWPROOF_UPDATE_DOCS") != "" {
			t.Logf("the table is:\n%s", want)
		}
		t.Errorf("the rules table of docs/rbac.md is stale; SKEWPROOF_UPDATE_DOCS=1 go test ./runner -run TestRBACDocIsCurrent -v prints the current one")
	}
}
