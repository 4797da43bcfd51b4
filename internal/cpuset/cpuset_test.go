package cpuset

import "testing"

func TestCPUSets(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  bool
	}{
		{"1", "1", false},
		{"0-2", "0-2", false},
		{"3,0-1,1", "0-1,3", false},
		{"0,2,4-5", "0,2,4-5", false},
		{"2-1", "", true},
		{"a", "", true},
		{"", "", true},
		{"-1", "", true},
		{"7", "7", false},
		{"8", "", true},
		{"0-4000000000", "", true},
	}
	for _, c := range cases {
		cpus, err := Parse(c.in, 8)
		if (err != nil) != c.err {
			t.Errorf("Parse(%q) error = %v, want error %v", c.in, err, c.err)
			continue
		}
		if got := Format(cpus); !c.err && got != c.want {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUnion(t *testing.T) {
	for _, c := range []struct {
		sets [][]int
		want string
	}{
		{[][]int{{0}, {1}}, "0-1"},
		{[][]int{{3, 1}, {1, 2}, {0}}, "0-3"},
		{[][]int{{5}, nil}, "5"},
		{nil, ""},
	} {
		if got := Format(Union(c.sets...)); got != c.want {
			t.Errorf("Union(%v) = %q, want %q", c.sets, got, c.want)
		}
	}
}
