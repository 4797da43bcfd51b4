package container

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/golden"
)

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

// writeContext puts a context into the store under dir as the docker CLI writes it: meta.json
// (raw when meta is given) and the TLS files named.
func writeContext(t *testing.T, dir, name, host string, skip bool, meta string, tlsFiles ...string) {
	t.Helper()
	id := contextID(name)
	if meta == "" {
		b, _ := json.Marshal(map[string]any{"Name": name, "Metadata": map[string]any{},
			"Endpoints": map[string]any{"docker": map[string]any{"Host": host, "SkipTLSVerify": skip}}})
		meta = string(b)
	}
	metaDir := filepath.Join(dir, "contexts", "meta", id)
	os.MkdirAll(metaDir, 0o755)
	if err := os.WriteFile(filepath.Join(metaDir, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	tlsDir := filepath.Join(dir, "contexts", "tls", id, "docker")
	for _, f := range tlsFiles {
		os.MkdirAll(tlsDir, 0o755)
		os.WriteFile(filepath.Join(tlsDir, f), []byte("pem"), 0o600)
	}
}

// TestResolveEngine resolves addresses, names and environments against a store of every kind
// of context, and pins the result or the error of each (testdata/resolve-engine.golden).
func TestResolveEngine(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, ".docker")
	writeContext(t, store, "bench", "ssh://bench@10.77.0.2", false, "")
	writeContext(t, store, "secure", "tcp://10.77.0.2:2376", false, "", "ca.pem", "cert.pem", "key.pem")
	writeContext(t, store, "lax", "tcp://10.77.0.2:2376", true, "")
	writeContext(t, store, "half", "tcp://10.77.0.2:2376", false, "", "cert.pem")
	writeContext(t, store, "broken", "", false, "{not json")
	writeContext(t, store, "kube", "", false, `{"Name":"kube","Endpoints":{"kubernetes":{"Host":"https://k"}}}`)
	writeContext(t, store, "moved", "", false, `{"Name":"other","Endpoints":{"docker":{"Host":"tcp://x:1"}}}`)
	writeContext(t, store, "nohost", "", false, `{"Name":"nohost","Endpoints":{"docker":{"Host":"bench"}}}`)
	other := filepath.Join(home, "elsewhere")
	writeContext(t, other, "far", "tcp://10.77.9.2:2375", false, "")
	os.WriteFile(filepath.Join(other, "config.json"), []byte(`{"currentContext": "far"}`), 0o644)
	bad := filepath.Join(home, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "config.json"), []byte(`{"currentContext": `), 0o644)

	cases := []struct {
		name string
		env  map[string]string
	}{
		{"tcp://10.77.0.2:2375", nil},
		{"ssh://root@10.77.0.2", map[string]string{"DOCKER_HOST": "tcp://ignored:2375"}},
		{"", nil},
		{"", map[string]string{"DOCKER_HOST": "tcp://10.77.0.2:2375"}},
		{"", map[string]string{"DOCKER_CONTEXT": "bench"}},
		{"", map[string]string{"DOCKER_HOST": "tcp://10.77.0.2:2375", "DOCKER_CONTEXT": "bench"}},
		{"", map[string]string{"DOCKER_CONTEXT": "nope"}},
		{"", map[string]string{"DOCKER_CONFIG": other}},
		{"", map[string]string{"DOCKER_CONFIG": bad}},
		{"bench", map[string]string{"DOCKER_HOST": "tcp://ignored:2375"}},
		{"secure", nil},
		{"lax", nil},
		{"default", nil},
		{"default", map[string]string{"DOCKER_HOST": "tcp://10.77.0.2:2375"}},
		{"far", map[string]string{"DOCKER_CONFIG": other}},
		{"far", nil},
		{"half", nil},
		{"broken", nil},
		{"kube", nil},
		{"moved", nil},
		{"nohost", nil},
		{"not a name", nil},
		{"-bench", nil},
	}
	var out strings.Builder
	for _, c := range cases {
		e, err := resolveEngine(c.name, func(k string) string { return c.env[k] }, home)
		var env []string
		for _, k := range []string{"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG"} {
			if v, ok := c.env[k]; ok {
				env = append(env, k+"="+v)
			}
		}
		fmt.Fprintf(&out, "%q %s\n", c.name, strings.Join(env, " "))
		if err != nil {
			fmt.Fprintf(&out, "  error: %v\n", err)
			continue
		}
		fmt.Fprintf(&out, "  %s\n", e)
		if e.TLS != nil {
			fmt.Fprintf(&out, "  tls: ca %q cert %q key %q skip-verify %v\n", strings.TrimPrefix(e.TLS.CA, home), strings.TrimPrefix(e.TLS.Cert, home),
				strings.TrimPrefix(e.TLS.Key, home), e.TLS.SkipVerify)
		}
	}
	goldenFile(t, "resolve-engine.golden", strings.ReplaceAll(out.String(), home, "$HOME"))
}

// TestResolveEngineReadsTheDockerCLIsStore reads a context that the docker CLI itself created:
// the store's layout is its, not this test's idea of it.
func TestResolveEngineReadsTheDockerCLIsStore(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker CLI to create a context with")
	}
	dir := t.TempDir()
	create := exec.Command("docker", "--config", dir, "context", "create", "bench", "--docker", "host=ssh://bench@10.77.0.2:2222,skip-tls-verify=true")
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("docker context create: %v\n%s", err, out)
	}
	env := map[string]string{"DOCKER_CONFIG": dir}
	e, err := resolveEngine("bench", func(k string) string { return env[k] }, "/nonexistent")
	if err != nil {
		t.Fatal(err)
	}
	if e.Host != "ssh://bench@10.77.0.2:2222" || e.Context != "bench" || e.TLS == nil || !e.TLS.SkipVerify {
		t.Errorf("got %+v (TLS %+v), want the context's ssh address with skip-verify", e, e.TLS)
	}
	use := exec.Command("docker", "--config", dir, "context", "use", "bench")
	if out, err := use.CombinedOutput(); err != nil {
		t.Fatalf("docker context use: %v\n%s", err, out)
	}
	if e, err := resolveEngine("", func(k string) string { return env[k] }, "/nonexistent"); err != nil || e.Context != "bench" {
		t.Errorf("the current context: got %+v, %v; want bench", e, err)
	}
}

// FuzzParseContextMeta feeds meta.json files of any shape: the parser never panics, and what it
// accepts names an address without control characters.
func FuzzParseContextMeta(f *testing.F) {
	f.Add([]byte(`{"Name":"bench","Metadata":{},"Endpoints":{"docker":{"Host":"ssh://bench@10.77.0.2","SkipTLSVerify":false}}}`))
	f.Add([]byte(`{"Name":"k","Endpoints":{"kubernetes":{}}}`))
	f.Add([]byte(`{"Name":1}`))
	f.Add([]byte(`{"Endpoints":{"docker":{"Host":"tcp://a\u0000:1"}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseContextMeta(b)
		if err != nil {
			return
		}
		if !strings.Contains(m.Host, "://") || strings.ContainsAny(m.Host, "\x00\n\r") {
			t.Errorf("accepted host %q", m.Host)
		}
	})
}
