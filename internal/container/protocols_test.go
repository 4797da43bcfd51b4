package container

import (
	"slices"
	"strings"
	"testing"
)

func TestParseProtocols(t *testing.T) {
	for _, c := range []struct {
		label   string
		want    []string
		wantErr string
	}{
		{"", []string{"http1"}, ""},
		{"http1 https h2 h2c", []string{"http1", "https", "h2", "h2c"}, ""},
		{"  http1\thttps ", []string{"http1", "https"}, ""},
		{"http1 h3", nil, `label iotbench.protocols="http1 h3": unknown protocol "h3"`},
		{"http1,https", nil, `unknown protocol "http1,https"`},
	} {
		got, err := ParseProtocols(c.label)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: %v, want an error containing %q", c.label, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v %v, want %v", c.label, got, err, c.want)
		}
	}
}
