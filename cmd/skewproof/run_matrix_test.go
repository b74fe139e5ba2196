package main

import "testing"

// --matrix-parallel auto is one cluster per core as long as memory fits
// them, never none; a number is taken as given (preflight then checks it
// against memory); anything else is refused.
func TestMatrixParallel(t *testing.T) {
	for _, c := range []struct {
		arg        string
		cores, fit int
		want       int
	}{
		{"auto", 2, 11, 3},
		{"auto", 16, 3, 3},
		{"auto", 1, 11, 2},
		{"auto", 2, 0, 1},
		{"3", 2, 11, 3},
		{"99", 2, 1, 99},
	} {
		if got, err := matrixParallel(c.arg, c.cores, c.fit); err != nil || got != c.want {
			t.Errorf("matrixParallel(%s, %d cores, %d fit) = %d, %v; want %d", c.arg, c.cores, c.fit, got, err, c.want)
		}
	}
	for _, arg := range []string{"0", "-1", "two", ""} {
		if _, err := matrixParallel(arg, 2, 11); err == nil {
			t.Errorf("--matrix-parallel %q accepted", arg)
		}
	}
}
