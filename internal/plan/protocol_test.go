package plan

import (
	"path/filepath"
	"testing"

	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/scenario"
)

// The protocol and its settings are the scenario's (or its defaults'), the command line's when
// given; settings of another protocol are refused, a protocol the engine does not speak too.
func TestProtocolSettings(t *testing.T) {
	f, err := scenario.Load("../scenario/testdata/protocol.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scenario string
		o        []string
		want     load.Request
	}{
		{"plain", nil, load.Request{Protocol: protocol.HTTP1}},
		{"tls", nil, load.Request{Protocol: protocol.HTTPS}},
		{"tls", []string{"tls_resumption", "true"}, load.Request{Protocol: protocol.HTTPS, Resume: true}},
		{"tls-handshake", nil, load.Request{Protocol: protocol.HTTPS, NewConnection: true}},
		{"h2", nil, load.Request{Protocol: protocol.H2, Streams: 10, Resume: true}},
		{"h2", []string{"h2_streams", "3", "tls_resumption", "false"}, load.Request{Protocol: protocol.H2, Streams: 3}},
		{"h2", []string{"protocol", "h2c"}, load.Request{Protocol: protocol.H2C, Streams: 10}},
		{"h2", []string{"protocol", "http1"}, load.Request{Protocol: protocol.HTTP1}},
		{"plain", []string{"protocol", "h2c", "h2_streams", "100"}, load.Request{Protocol: protocol.H2C, Streams: 100}},
	} {
		p, err := Make(f, tc.scenario, Overrides{Load: given(t, tc.o...)}, []int{0, 1})
		if err != nil {
			t.Errorf("%s %+v: %v", tc.scenario, tc.o, err)
			continue
		}
		r := p.Cells[0].Load.Request
		if r.Protocol != tc.want.Protocol || r.Streams != tc.want.Streams || r.Resume != tc.want.Resume || r.NewConnection != tc.want.NewConnection {
			t.Errorf("%s %+v: protocol %s, %d streams, resume %v, new connections %v; want %+v", tc.scenario, tc.o, r.Protocol, r.Streams, r.Resume, r.NewConnection, tc.want)
		}
	}
	if got := TargetURL("http://127.0.0.1:8080", protocol.H2) + "/x"; got != "https://127.0.0.1:8080/x" {
		t.Errorf("h2's target URL %s", got)
	}
}

func TestProtocolErrorsAreGolden(t *testing.T) {
	f, err := scenario.Load("../scenario/testdata/protocol.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, tc := range []struct {
		scenario string
		o        []string
	}{
		{"tls", []string{"protocol", "h3"}},
		{"tls", []string{"protocol", "spdy"}},
		{"tls", []string{"h2_streams", "4"}},
		{"h2", []string{"h2_streams", "5000"}},
		{"plain", []string{"tls_resumption", "true"}},
	} {
		_, err := Make(f, tc.scenario, Overrides{Load: given(t, tc.o...)}, []int{0, 1})
		if err == nil {
			t.Errorf("%s %+v: planned", tc.scenario, tc.o)
			continue
		}
		out = append(out, err.Error()+"\n"...)
	}
	for _, tc := range []struct {
		url string
		o   []string
	}{
		{"https://10.1.2.3:8443/", nil},
		{"http://127.0.0.1:8080/", []string{"protocol", "https"}},
		{"https://127.0.0.1:8443/", []string{"protocol", "h2c"}},
		{"http://127.0.0.1:8080/", []string{"protocol", "h3"}},
	} {
		_, err := MakeAdHoc(AdHoc{URL: tc.url, Load: given(t, append(tc.o, "rate", "1")...)})
		if err == nil {
			t.Errorf("--url %s %+v: planned", tc.url, tc.o)
			continue
		}
		out = append(out, err.Error()+"\n"...)
	}
	golden.Check(t, filepath.Join("testdata", "protocol-errors.golden"), out)
	p, err := MakeAdHoc(AdHoc{URL: "https://127.0.0.1:8443/x", Load: given(t, "rate", "1")})
	if err != nil || p.Cells[0].Load.Request.Protocol != protocol.HTTPS {
		t.Errorf("--url https://: %v, want https", err)
	}
}
