package summary

import "testing"

func TestMixText(t *testing.T) {
	cases := []struct{ streams, request, want string }{
		{"", "", ""},
		{"ingest:80,page:20,probe@50", "", "a mix: ingest 80% and page 20% of the load, probe at 50 rps of its own"},
		{"heavy:1,probe@50", "", "a mix: heavy all of the load, probe at 50 rps of its own"},
		{"a:1,b:1,c:2", "", "a mix: a 25%, b 25% and c 50% of the load"},
		{"ingest:80,page:20", "page", "request page of the mix ingest:80,page:20"},
	}
	for _, tc := range cases {
		if got := MixText(tc.streams, tc.request); got != tc.want {
			t.Errorf("MixText(%q, %q) = %q, want %q", tc.streams, tc.request, got, tc.want)
		}
	}
}
