package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/hostinfo"
)

// TestBadInputIsRefused runs commands whose flags or scenario values no run can use, and checks
// what each says and its exit status (2, before anything is built) against
// testdata/run/bad-input.golden (-update rewrites it). This machine's CPUs are written as
// <last CPU> and <available> there.
func TestBadInputIsRefused(t *testing.T) {
	const f = "--file testdata/run/scenarios.yaml "
	const url = "--url http://127.0.0.1:1/x "
	cases := []string{
		"run " + f + "--rate 0",
		"run " + f + "--connections -3",
		"run " + f + "--connections 20000",
		"run " + f + "--trials 0",
		"run " + f + "--duration 0s",
		"run " + f + "--duration 500ms",
		"run " + f + "--duration 2.5005s",
		"run " + f + "--duration 48h",
		"run " + f + "--warmup -1s",
		"run " + f + "--warmup sometimes",
		"run " + f + "--warmup auto:0s",
		"run " + f + "--compat ab",
		"run " + url + "--connections 4 --compat wrk2",
		"run " + f + "--rate 5 --connections 5",
		"run " + f + "--memory 3k",
		"run " + f + "--find-max --step 0s",
		"run " + f + "--timeout 0s",
		"run " + f + "--scenario waits --timeout 50ms",
		"run " + f + "--cpus 0-4000000000",
		"run " + f + "--generator-host unix:///var/run/docker.sock --find-max",
		"run " + f + "--generator-host tcp://10.0.0.3:2375 --generator-host tcp://10.0.0.4:2375 --generators 1",
		"run " + f + "--targets t,ghost",
		"run " + f + "--kube prod --docker-host tcp://10.0.0.3:2375",
		"run " + f + "--kubeconfig /tmp/kc",
		"run " + f + "--kube prod --image-loader kind-load --registry registry.example/",
		"run " + f + "--kube absent --kubeconfig testdata/run/scenarios.yaml",
		"clean --kubeconfig /tmp/kc",
		"run " + f + "--scenario far-cpus",
		"run " + f + "--docker-host ssh://bench:secret@10.0.0.2",
		"run " + f + "--docker-host bench/host",
		"run " + f + "--docker-host fd://3",
		"run --file ../scenario/testdata/bad-check.yaml",
		"run " + url + "--rate 10 --timeout 50ms --expected-latency 100ms",
		"run " + url + "--rate 10 --expected-latency 0s",
		"run " + url + "--connections 4 --trials -1",
		"run " + f + "--protocol h3",
		"run " + f + "--h2-streams 8",
		"run " + f + "--tls-resumption",
		"run " + url + "--rate 10 --protocol https",
		"run --url https://10.0.0.5:8443/x --rate 10",
		"run --url https://127.0.0.1:1/x --rate 10 --protocol h2c",
		"run --url https://127.0.0.1:1/x --rate 10",
		"run --url https://127.0.0.1:1/x --rate 10 --ca testdata/run/scenarios.yaml",
		"run " + url + "--rate 10 --ca testdata/run/scenarios.yaml",
		"run " + f + "--ca testdata/run/scenarios.yaml",
		"run " + url + "--rate 10 --baseline-url http://127.0.0.1:2/x --find-max --fail-on p99:+10%",
		"run " + url + "--rate 10 --baseline-url http://127.0.0.1:2/x --find-max --until max:±5%",
		"run " + url + "--rate 10 --baseline-url http://127.0.0.1:2/x --fail-on max:-10%",
		"verify " + f + "--payload ../../payloads/iot-reading.json --cpus 0-4000000000",
		"verify " + f + "--payload ../../payloads/iot-reading.json --targets ghost",
		"verify " + f + "--payload ../../payloads/iot-reading.json --protocol http1,h3",
	}
	allowed, err := hostinfo.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	machine := strings.NewReplacer(
		fmt.Sprintf("numbered 0 to %d here", slices.Max(allowed)), "numbered 0 to <last CPU> here",
		"(available: "+cpuset.Format(allowed)+")", "(available: <available>)")
	var got strings.Builder
	for _, args := range cases {
		s, out, errOut := streams()
		code := Main(context.Background(), strings.Fields(args), s)
		fmt.Fprintf(&got, "$ iotbench %s\n%s--- stderr\n%s--- exit %d\n\n", args, out, machine.Replace(errOut.String()), code)
		if code != ExitUsage {
			t.Errorf("iotbench %s: exit %d, want %d", args, code, ExitUsage)
		}
	}
	checkGolden(t, "testdata/run/bad-input.golden", got.String())
}
