package release

import (
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in, want, errFrag string
	}{
		{in: "1.37.2", want: "1.37.2"},
		{in: "v1.37.2", want: "1.37.2"},
		{in: " v1.29.6 ", want: "1.29.6"},
		{in: "1.37", errFrag: "malformed version"},
		{in: "1.37.2-rc.1", errFrag: "malformed version"},
		{in: "latest", errFrag: "malformed version"},
		{in: "", errFrag: "malformed version"},
		{in: "vv1.2.3", errFrag: "malformed version"},
	}
	for _, c := range cases {
		v, err := ParseVersion(c.in)
		if c.errFrag != "" {
			if err == nil || !strings.Contains(err.Error(), c.errFrag) {
				t.Errorf("ParseVersion(%q) error = %v, want one containing %q", c.in, err, c.errFrag)
			}
			continue
		}
		if err != nil || v.String() != c.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %s", c.in, v, err, c.want)
		}
	}
}

func TestParseMinorRange(t *testing.T) {
	cases := []struct {
		in, from, to, errFrag string
	}{
		{in: "1.34..1.37", from: "1.34", to: "1.37"},
		{in: "v1.34..v1.37", from: "1.34", to: "1.37"},
		{in: "1.36", from: "1.36", to: "1.36"},
		{in: "1.37..1.34", errFrag: "reversed"},
		{in: "1.34...1.37", errFrag: "malformed"},
		{in: "1.34..", errFrag: "malformed minor"},
		{in: "1.34.2..1.37", errFrag: "malformed minor"},
		{in: "1.34..2.1", errFrag: "spans major"},
	}
	for _, c := range cases {
		from, to, err := ParseMinorRange(c.in)
		if c.errFrag != "" {
			if err == nil || !strings.Contains(err.Error(), c.errFrag) {
				t.Errorf("ParseMinorRange(%q) error = %v, want one containing %q", c.in, err, c.errFrag)
			}
			continue
		}
		if err != nil || from.String() != c.from || to.String() != c.to {
			t.Errorf("ParseMinorRange(%q) = %s, %s, %v; want %s, %s", c.in, from, to, err, c.from, c.to)
		}
	}
}

func TestWindow(t *testing.T) {
	cases := []struct {
		w    Window
		v    string
		want bool
		str  string
	}{
		{MustWindow("1.30", "1.34"), "1.29.6", false, "v1.30 to v1.33"},
		{MustWindow("1.30", "1.34"), "1.30.0", true, "v1.30 to v1.33"},
		{MustWindow("1.30", "1.34"), "1.33.13", true, "v1.30 to v1.33"},
		{MustWindow("1.30", "1.34"), "1.34.0", false, "v1.30 to v1.33"},
		{MustWindow("1.36", ""), "1.37.2", true, "v1.36 onwards"},
		{MustWindow("", "1.31"), "1.30.14", true, "before v1.31"},
		{MustWindow("", "1.31"), "1.31.0", false, "before v1.31"},
		{Window{}, "1.2.3", true, "all versions"},
		{MustWindow("1.30", "1.31"), "1.30.4", true, "v1.30 only"},
	}
	for _, c := range cases {
		if got := c.w.Contains(MustParseVersion(c.v)); got != c.want {
			t.Errorf("%v.Contains(%s) = %v, want %v", c.w, c.v, got, c.want)
		}
		if c.w.String() != c.str {
			t.Errorf("window string = %q, want %q", c.w.String(), c.str)
		}
	}
}
