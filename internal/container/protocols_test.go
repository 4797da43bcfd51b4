package container

import (
	"slices"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/protocol"
)

func TestParseProtocols(t *testing.T) {
	for _, c := range []struct {
		label   string
		want    []protocol.Protocol
		wantErr string
	}{
		{"", []protocol.Protocol{"http1"}, ""},
		{"http1 https h2 h2c", []protocol.Protocol{"http1", "https", "h2", "h2c"}, ""},
		{"  http1\thttps ", []protocol.Protocol{"http1", "https"}, ""},
		{"http1 h3", nil, `label iotbench.protocols="http1 h3": protocol "h3": HTTP/3 is not supported; use http1, https, h2 or h2c`},
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
