// Package rbac is an RBAC rule with the reason it is needed: what a suite
// declares its specs do (suites/env.Suite.Permissions), what deploying the
// node agent takes (profiles.DeployerRules), and what the runner does
// itself; the runner merges them into the ClusterRole 'skewproof rbac'
// prints (docs/rbac.md).
package rbac

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Rule is one RBAC rule and why it is needed.
type Rule struct {
	rbacv1.PolicyRule
	Why string `json:"why"`
}

// New is a rule on resources of the API groups, restricted to the object
// names when names is not empty.
func New(groups, resources, names []string, why string, verbs ...string) Rule {
	return Rule{PolicyRule: rbacv1.PolicyRule{APIGroups: groups, Resources: resources, ResourceNames: names, Verbs: verbs}, Why: why}
}

// Core is New for the core API group ("").
func Core(resources []string, names []string, why string, verbs ...string) Rule {
	return New([]string{""}, resources, names, why, verbs...)
}

// verbOrder is the order verbs are listed in after a merge.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

func verbRank(v string) int {
	if i := slices.Index(verbOrder, v); i >= 0 {
		return i
	}
	return len(verbOrder)
}

// key is what makes two rules the same rule but for their verbs.
func key(r rbacv1.PolicyRule) string {
	return strings.Join([]string{strings.Join(r.APIGroups, ","), strings.Join(r.Resources, ","),
		strings.Join(r.ResourceNames, ","), strings.Join(r.NonResourceURLs, ",")}, "|")
}

// whySep separates the reasons of a merged rule.
const whySep = "; "

// Merge makes one rule of the rules on the same API groups, resources,
// names and URLs: the union of their verbs (in the order get, list, watch,
// create, update, patch, delete) and their reasons, in the order each
// first appears.
func Merge(rules ...[]Rule) []Rule {
	var out []Rule
	at := map[string]int{}
	for _, list := range rules {
		for _, r := range list {
			k := key(r.PolicyRule)
			i, seen := at[k]
			if !seen {
				at[k] = len(out)
				c := r
				c.Verbs = nil
				c.Why = ""
				out = append(out, c)
				i = len(out) - 1
			}
			m := &out[i]
			for _, v := range r.Verbs {
				if !slices.Contains(m.Verbs, v) {
					m.Verbs = append(m.Verbs, v)
				}
			}
			for _, why := range strings.Split(r.Why, whySep) {
				switch {
				case m.Why == "":
					m.Why = why
				case why != "" && !slices.Contains(strings.Split(m.Why, whySep), why):
					m.Why += whySep + why
				}
			}
		}
	}
	for i := range out {
		slices.SortStableFunc(out[i].Verbs, func(a, b string) int { return verbRank(a) - verbRank(b) })
	}
	return out
}

// Policy is the rules without their reasons.
func Policy(rules []Rule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for _, r := range rules {
		out = append(out, r.PolicyRule)
	}
	return out
}

// Allows says whether rules let a subject do verb on the resource of the
// API group (an object of that name; "" for the whole resource), as the
// RBAC authorizer decides it (no wildcards: no rule of skewproof's has one).
func Allows(rules []rbacv1.PolicyRule, verb, group, resource, name string) bool {
	for _, r := range rules {
		if slices.Contains(r.Verbs, verb) && slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
			(len(r.ResourceNames) == 0 || (name != "" && slices.Contains(r.ResourceNames, name))) {
			return true
		}
	}
	return false
}
