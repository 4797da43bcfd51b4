package container

import (
	"fmt"
	"strings"
	"testing"
)

func TestEngineHost(t *testing.T) {
	var out strings.Builder
	for _, host := range []string{
		"unix:///var/run/docker.sock",
		"tcp://127.0.0.1:2375",
		"tcp://localhost:2375",
		"tcp://10.77.0.2:2375",
		"tcp://[::1]:2376",
		"ssh://bench@10.77.0.2",
		"fd://",
	} {
		got, err := EngineHost(host)
		fmt.Fprintf(&out, "%s: %q %v\n", host, got, err)
	}
	want := `unix:///var/run/docker.sock: "" <nil>
tcp://127.0.0.1:2375: "" <nil>
tcp://localhost:2375: "" <nil>
tcp://10.77.0.2:2375: "10.77.0.2" <nil>
tcp://[::1]:2376: "" <nil>
ssh://bench@10.77.0.2: "" engine address "ssh://bench@10.77.0.2": ssh is not supported; forward the engine's socket (ssh -NL /tmp/remote.sock:/var/run/docker.sock HOST) or expose it on tcp with TLS
fd://: "" engine address "fd://": use unix:// or tcp://
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
