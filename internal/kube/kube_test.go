package kube

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"go.yaml.in/yaml/v3"
)

func cell() plan.Cell {
	return plan.Cell{
		Scenario: "io-heavy", Target: "fastify",
		Build: container.BuildSpec{Context: "targets/js", Dockerfile: "fastify/Dockerfile"},
		Spec: container.Spec{Target: "fastify", Port: 8083, Env: map[string]string{"WORKER_POOL": "on", "DB_POOL_SIZE": "10"},
			Command: []string{"node", "server.js"}, Health: "/health", Memory: 512 << 20},
		Path: "/ingest",
		Load: load.Config{
			Request: load.Request{Method: "POST", URL: "http://127.0.0.1:8083/ingest", Body: []byte(`{"id":1}`)},
			Check:   load.NewCheck(`"processingMs"`),
			Model:   load.Model{Rate: 4000, ExpectedLatency: 50 * time.Millisecond},
			Warmup:  10 * time.Second, Duration: 30 * time.Second, Timeout: 10 * time.Second,
		},
	}
}

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout Layout
	}{
		{"four-shards", Layout{Namespace: "bench", Registry: "registry.example/", IotbenchImage: "registry.example/iotbench:v1",
			Generators: 4, TargetCPUs: 2, Start: time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC), ResultsClaim: "results"}},
		{"rate-does-not-divide", Layout{Generators: 3, TargetCPUs: 1}},
		{"no-cpus", Layout{Generators: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Render(&out, cell(), tc.layout); err != nil {
				out.Reset()
				out.WriteString("error: " + err.Error() + "\n")
			} else {
				// Every document parses, and the shards' spec in the ConfigMap is the one they read.
				dec := yaml.NewDecoder(bytes.NewReader(out.Bytes()))
				kinds := []string{}
				for {
					var doc struct {
						Kind string
						Data map[string]string
					}
					if err := dec.Decode(&doc); err != nil {
						if err.Error() != "EOF" {
							t.Fatalf("the manifests do not parse: %v", err)
						}
						break
					}
					kinds = append(kinds, doc.Kind)
					if doc.Kind == "ConfigMap" && !strings.Contains(doc.Data["spec.json"], `"Rate": 1000`) {
						t.Errorf("the shards' spec: %s", doc.Data["spec.json"])
					}
				}
				if got := strings.Join(kinds, ","); got != "ConfigMap,Pod,Service,Job" {
					t.Errorf("documents %s", got)
				}
			}
			path := filepath.Join("testdata", tc.name+".golden")
			golden.Check(t, path, out.Bytes())
		})
	}
}
