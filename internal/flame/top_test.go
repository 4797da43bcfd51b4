package flame

import (
	"reflect"
	"strings"
	"testing"
)

func folded(t *testing.T, s string) Profile {
	t.Helper()
	p, err := ParseFolded(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTop(t *testing.T) {
	// main calls f, which recurses and calls g: f counts once per stack in its total. Equal self
	// shares go by total share: main before h.
	p := folded(t, "main;f;f;f 4\nmain;f;g 2\nmain;h 1\nmain 1\n")
	for _, tc := range []struct {
		n    int
		want []Share
	}{
		{2, []Share{{"f", 0.5, 0.75}, {"g", 0.25, 0.25}}},
		{0, []Share{{"f", 0.5, 0.75}, {"g", 0.25, 0.25}, {"main", 0.125, 1}, {"h", 0.125, 0.125}}},
		{10, []Share{{"f", 0.5, 0.75}, {"g", 0.25, 0.25}, {"main", 0.125, 1}, {"h", 0.125, 0.125}}},
	} {
		if got := p.Top(tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Top(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	if got := (Profile{}).Top(5); len(got) != 0 {
		t.Errorf("Top of an empty profile = %v", got)
	}
}

func TestDiff(t *testing.T) {
	old := folded(t, "main;f 4\nmain;g 2\nmain;h 2\n")   // f .5, g .25, h .25
	new := folded(t, "main;f 8\nmain;g 4\nmain;k;x 4\n") // f .5, g .25, x .25, k total .25
	for _, tc := range []struct {
		name     string
		old, new Profile
		n        int
		want     []Change
	}{
		{"gone and new, tied, by name", old, new, 0, []Change{
			{Frame: "h", Old: 0.25, New: 0, OldTotal: 0.25, NewTotal: 0},
			{Frame: "x", Old: 0, New: 0.25, OldTotal: 0, NewTotal: 0.25},
		}},
		{"largest first", folded(t, "a 9\nb 1\n"), folded(t, "a 6\nb 4\n"), 0, []Change{
			{Frame: "a", Old: 0.9, New: 0.6, OldTotal: 0.9, NewTotal: 0.6},
			{Frame: "b", Old: 0.1, New: 0.4, OldTotal: 0.1, NewTotal: 0.4},
		}},
		{"n cuts", folded(t, "a 5\nb 3\nc 2\n"), folded(t, "a 2\nb 3\nc 5\n"), 1, []Change{
			{Frame: "a", Old: 0.5, New: 0.2, OldTotal: 0.5, NewTotal: 0.2},
		}},
		{"equal profiles", old, old, 5, nil},
		{"from nothing", Profile{}, folded(t, "a 1\n"), 5, []Change{{Frame: "a", New: 1, NewTotal: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.old, tc.new, tc.n)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Diff = %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if d := (Change{Old: 0.5, New: 0.25}).Delta(); d != -0.25 {
		t.Errorf("Delta = %v, want -0.25", d)
	}
}
