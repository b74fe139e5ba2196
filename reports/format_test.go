package reports

import "testing"

func TestParseFormat(t *testing.T) {
	if f, err := ParseFormat("markdown", OracleFormats...); err != nil || f != Markdown {
		t.Errorf("markdown: %v, %v", f, err)
	}
	for _, s := range []string{"md", "github", "yaml", ""} {
		_, err := ParseFormat(s, OracleFormats...)
		if err == nil || err.Error() != `unknown --format "`+s+`"; use text, json or markdown` {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseFormat("github", MatrixFormats...); err != nil {
		t.Errorf("github for a cluster plan: %v", err)
	}
	if got := FormatList(Text); got != "text" {
		t.Errorf("FormatList of one = %q", got)
	}
}
