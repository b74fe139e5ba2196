package main

import (
	"context"
	"strings"

	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/served"
)

// checkPair validates an apiserver version and its kubelet versions before
// anything is built or started: syntax, skew policy, served sources.
// needSources is false when prebuilt node images are used.
func checkPair(ctx context.Context, apiserver string, kubelets []string, needSources bool) error {
	a, err := skew.ParseVersion(apiserver)
	if err != nil {
		return usagef("--apiserver: %v", err)
	}
	for _, k := range kubelets {
		kv, err := skew.ParseVersion(k)
		if err != nil {
			return usagef("--kubelets: %v", err)
		}
		if err := skew.CheckSkew(a, kv); err != nil {
			return usagef("%v", err)
		}
	}
	if !needSources {
		return nil
	}
	for _, v := range append([]string{apiserver}, kubelets...) {
		pv, _ := skew.ParseVersion(v)
		if err := served.Check(ctx, pv); err != nil {
			return usagef("%v", err)
		}
	}
	return nil
}

// splitList splits a comma-separated list of names or versions (without a
// leading "v").
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, strings.TrimPrefix(f, "v"))
		}
	}
	return out
}

// featureGates parses the values of --feature-gates Name=true|false,…: set
// on every component of a new cluster.
func featureGates(values []string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, v := range values {
		if err := skew.ParseFeatureGates(v, gates); err != nil {
			return nil, usagef("--feature-gates: %v", err)
		}
	}
	return gates, nil
}

// checkGates says whether every component of the cluster (apiserver and the
// kubelets) accepts the gates.
func checkGates(gates map[string]bool, apiserver string, kubelets []string) error {
	for _, v := range append([]string{apiserver}, kubelets...) {
		ver, err := skew.ParseVersion(strings.TrimPrefix(v, "v"))
		if err != nil {
			continue // reported by the version checks
		}
		for k, val := range gates {
			if err := skew.CheckFeatureGate(k, val, ver); err != nil {
				return usagef("--feature-gates: %v", err)
			}
		}
	}
	return nil
}

const nodeImageUsage = "prebuilt node image for the control plane (REF), or for one kubelet version (VERSION=REF); repeatable"

// nodeImages parses the values of --node-image: REF for the control plane,
// VERSION=REF for the nodes of one kubelet version.
func nodeImages(values []string) map[string]string {
	m := map[string]string{}
	for _, s := range values {
		if k, v, ok := strings.Cut(s, "="); ok && !strings.Contains(k, "/") && !strings.Contains(k, ":") {
			m[strings.TrimPrefix(k, "v")] = v
		} else {
			m[""] = s
		}
	}
	return m
}
