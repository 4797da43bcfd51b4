package overview

import (
	"slices"
	"testing"
)

func TestMsTicksNeverLeaveAnAxisBare(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.1, 1000, []string{"0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"}},
		{3, 40, []string{"5", "10", "20"}},
		{150.9, 152.1, []string{"151", "152"}},
		{120, 210, []string{"120", "210"}}, // one round tick in range: the ends instead
	} {
		var got []string
		for _, tk := range (msTicks{}).Ticks(c.lo, c.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Ticks(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}
