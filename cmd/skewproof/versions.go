package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
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

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, strings.TrimPrefix(f, "v"))
		}
	}
	return out
}

// featureGatesFlag is --feature-gates Name=true|false,…: set on every
// component of the new cluster.
type featureGatesFlag map[string]bool

func (f featureGatesFlag) String() string {
	var out []string
	for k, v := range f {
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (f featureGatesFlag) Set(s string) error {
	for _, kv := range splitList(s) {
		k, v, ok := strings.Cut(kv, "=")
		b, err := strconv.ParseBool(v)
		if !ok || k == "" || err != nil || strings.ContainsAny(k, " /.") {
			return fmt.Errorf("want Name=true|false, got %q", kv)
		}
		f[k] = b
	}
	return nil
}

// check says whether every component of the cluster (apiserver and the
// kubelets) accepts the gates.
func (f featureGatesFlag) check(apiserver string, kubelets []string) error {
	for _, v := range append([]string{apiserver}, kubelets...) {
		ver, err := skew.ParseVersion(strings.TrimPrefix(v, "v"))
		if err != nil {
			continue // reported by the version checks
		}
		for k, val := range f {
			if err := skew.CheckFeatureGate(k, val, ver); err != nil {
				return usagef("--feature-gates: %v", err)
			}
		}
	}
	return nil
}
