package arrival

import "testing"

func TestCheckAndDefault(t *testing.T) {
	for _, tc := range []struct {
		p     Process
		valid bool
		or    Process
	}{
		{"", true, Uniform},
		{Uniform, true, Uniform},
		{Poisson, true, Poisson},
		{"bursty", false, "bursty"},
		{"Poisson", false, "Poisson"},
	} {
		if err := Check(tc.p); (err == nil) != tc.valid {
			t.Errorf("Check(%q) = %v, want valid %v", tc.p, err, tc.valid)
		}
		if got := tc.p.Or(); got != tc.or {
			t.Errorf("%q.Or() = %q, want %q", tc.p, got, tc.or)
		}
	}
}
