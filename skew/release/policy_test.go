package release

import (
	"strings"
	"testing"
)

func TestMaxKubeletSkew(t *testing.T) {
	cases := map[string]int{"1.26.0": 2, "1.27.9": 2, "1.28.0": 3, "1.29.6": 3, "1.37.2": 3}
	for v, want := range cases {
		if got := MaxKubeletSkew(MustParseVersion(v)); got != want {
			t.Errorf("MaxKubeletSkew(%s) = %d, want %d", v, got, want)
		}
	}
}

func TestCheckSkew(t *testing.T) {
	cases := []struct {
		apiserver, kubelet, errFrag string
	}{
		{"1.37.2", "1.37.2", ""},
		{"1.37.2", "1.34.4", ""},
		{"1.34.4", "1.34.0", ""},
		{"1.34.0", "1.34.4", ""}, // same minor: newer patch allowed
		{"1.37.2", "1.33.13", "trails kube-apiserver v1.37.2 by 4 minors, but the version-skew policy allows 3; use a kubelet of v1.34 or newer"},
		{"1.34.4", "1.35.4", "newer than kube-apiserver"},
		{"1.28.0", "1.25.0", ""},
		{"1.27.0", "1.24.0", "allows 2"},
		{"1.27.0", "1.25.0", ""},
		{"1.30.0", "2.30.0", "major"},
	}
	for _, c := range cases {
		err := CheckSkew(MustParseVersion(c.apiserver), MustParseVersion(c.kubelet))
		if c.errFrag == "" {
			if err != nil {
				t.Errorf("CheckSkew(%s, %s) = %v, want nil", c.apiserver, c.kubelet, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errFrag) {
			t.Errorf("CheckSkew(%s, %s) = %v, want error containing %q", c.apiserver, c.kubelet, err, c.errFrag)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckSkew error is not one line: %q", err)
		}
	}
}

func TestKubeletMinors(t *testing.T) {
	got := KubeletMinors(MustParseVersion("1.34.4"))
	var s []string
	for _, m := range got {
		s = append(s, m.String())
	}
	if strings.Join(s, " ") != "1.31 1.32 1.33 1.34" {
		t.Errorf("KubeletMinors(1.34.4) = %v", s)
	}
}
