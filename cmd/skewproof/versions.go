package main

import (
	"context"
	"strings"

	"github.com/skewproof/skewproof/skew"
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
		if err := skew.CheckServed(ctx, pv); err != nil {
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
