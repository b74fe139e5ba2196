package release

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/served/servedtest"
)

func TestMatrix(t *testing.T) {
	served := servedtest.Sorted()
	cs, err := Matrix(served, MustParseMinor("1.34"), MustParseMinor("1.37"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1.34.4: 1.31.14,1.32.13,1.33.13,1.34.4",
		"1.35.4: 1.32.13,1.33.13,1.34.4,1.35.4",
		"1.36.3: 1.33.13,1.34.4,1.35.4,1.36.3",
		"1.37.2: 1.34.4,1.35.4,1.36.3,1.37.2",
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Apiserver+": "+strings.Join(c.Kubelets, ","))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Matrix =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// 1.29's window reaches 1.26, which is not served.
	cs, err = Matrix(served, MustParseMinor("1.29"), MustParseMinor("1.29"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cs[0].Kubelets, ",") != "1.29.6" || strings.Join(cs[0].Missing, ",") != "1.26,1.27,1.28" {
		t.Errorf("Matrix 1.29 = %+v", cs[0])
	}
}

func TestMatrixErrors(t *testing.T) {
	served := servedtest.Sorted()
	if _, err := Matrix(served, MustParseMinor("1.37"), MustParseMinor("1.34")); err == nil || !strings.Contains(err.Error(), "reversed") {
		t.Errorf("reversed range: %v", err)
	}
	if _, err := Matrix(served, MustParseMinor("1.37"), MustParseMinor("1.38")); err == nil || !strings.Contains(err.Error(), "no served release of kubernetes v1.38") {
		t.Errorf("unserved minor: %v", err)
	}
}
