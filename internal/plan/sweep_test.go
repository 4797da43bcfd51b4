package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotbench/iotbench/internal/scenario"
)

func TestPayloadSweepPlansEverySize(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t"), 0o755)
	os.WriteFile(filepath.Join(dir, "t", "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "reading.json"), []byte(`{"deviceId":"d","firmware":"1.0","m":1.5}`), 0o644)
	file := filepath.Join(dir, "scenarios.yaml")
	os.WriteFile(file, []byte(`
targets:
  a: {build: t, port: 9001}
  b: {build: t, port: 9002}
scenarios:
  sizes:
    request: {method: POST, path: /ingest, body_file: reading.json, pad_field: firmware, body_sizes: [1k, 16k]}
    load: {rate: 10}
    trials: 2
    targets: [a, b]
  plain:
    request: {method: POST, path: /ingest, body_file: reading.json}
    load: {rate: 10}
    trials: 1
    targets: [a]
`), 0o644)
	f, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(f, "sizes", Overrides{}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range p.Cells {
		count[c.Scenario]++
		want := map[string]int{"sizes.1k": 1024, "sizes.16k": 16384}[c.Scenario]
		var doc map[string]any
		if len(c.Load.Request.Body) != want || json.Unmarshal(c.Load.Request.Body, &doc) != nil || doc["deviceId"] != "d" || doc["m"] != 1.5 {
			t.Errorf("%s %s trial %d: %d-byte body, want %d bytes of the reading", c.Scenario, c.Target, c.Trial, len(c.Load.Request.Body), want)
		}
	}
	if len(p.Cells) != 8 || count["sizes.1k"] != 4 || count["sizes.16k"] != 4 {
		t.Errorf("cells per size %v, want 2 targets × 2 trials for each of 2 sizes", count)
	}
	plain, err := Make(f, "plain", Overrides{}, []int{0, 1})
	if err != nil || len(plain.Cells) != 1 || plain.Cells[0].Scenario != "plain" || len(plain.Cells[0].Load.Request.Body) != 41 {
		t.Errorf("a scenario without sizes was changed: %v, %d cells", err, len(plain.Cells))
	}
}
