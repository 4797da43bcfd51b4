package container

import (
	"fmt"
	"strings"
	"testing"
)

func TestEngineHost(t *testing.T) {
	// ssh resolves an ssh:// host (here, as if ~/.ssh/config made bench-alias 10.77.0.3).
	standInSSH(t, "10.77.0.3", false, "")
	var out strings.Builder
	for _, host := range []string{
		"unix:///var/run/docker.sock",
		"tcp://127.0.0.1:2375",
		"tcp://localhost:2375",
		"tcp://10.77.0.2:2375",
		"tcp://[::1]:2376",
		"ssh://bench@bench-alias",
		"ssh://bench@bench-alias/run;x",
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
ssh://bench@bench-alias: "10.77.0.3" <nil>
ssh://bench@bench-alias/run;x: "" engine address "ssh://bench@bench-alias/run;x": the socket path may hold letters, digits and / . _ + - only; give ssh://[user@]host[:port][/socket]
fd://: "" engine address "fd://": use unix://, tcp:// or ssh://
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
