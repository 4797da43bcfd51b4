package container

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Engine is where a Docker engine is reached, resolved as the docker CLI resolves it: an address
// given, or a docker context's name, else DOCKER_HOST, DOCKER_CONTEXT, the context the docker
// CLI's config.json makes current, and last the local socket.
type Engine struct {
	// Host is the engine's address: unix:///path, tcp://host:port or ssh://[user@]host[:port][/socket].
	Host string
	// Context is the docker context Host came from; empty when an address was given.
	Context string
	// TLS is the context's own TLS material; nil for an address, whose TLS comes from
	// DOCKER_TLS_VERIFY and DOCKER_CERT_PATH as the docker CLI reads them.
	TLS *ContextTLS
}

// ContextTLS is a context's TLS material, files of its store (any of them may be absent).
type ContextTLS struct {
	CA, Cert, Key string
	// SkipVerify: the context was created with skip-tls-verify=true.
	SkipVerify bool
}

// String names the engine in messages: its address, and the context it came from.
func (e Engine) String() string {
	if e.Context != "" && e.Context != defaultContext {
		return fmt.Sprintf("%s (docker context %s)", e.Host, e.Context)
	}
	return e.Host
}

// defaultContext is the docker CLI's name for the engine of the environment.
const defaultContext = "default"

// contextName is what the docker CLI accepts as a context's name.
var contextName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.+-]+$`)

// ResolveEngine resolves name (an address, a context's name, or empty for the environment's
// engine) against this process's environment and the docker CLI's context store, and checks
// the address it comes to.
func ResolveEngine(name string) (Engine, error) {
	home, _ := os.UserHomeDir()
	e, err := resolveEngine(name, os.Getenv, home)
	if err != nil {
		return Engine{}, err
	}
	if err := checkAddress(e.Host); err != nil {
		if e.Context != "" {
			return Engine{}, fmt.Errorf("docker context %s: %w", e.Context, err)
		}
		return Engine{}, err
	}
	return e, nil
}

// checkAddress refuses an address the engine cannot be reached at, before anything is tried.
func checkAddress(host string) error {
	scheme, rest, _ := strings.Cut(host, "://")
	switch scheme {
	case "ssh":
		_, err := parseSSHEngine(host)
		return err
	case "unix", "npipe", "tcp", "http", "https":
		if rest == "" {
			return fmt.Errorf("engine address %q: no host or path", host)
		}
		return nil
	}
	return fmt.Errorf("engine address %q: use unix://, tcp:// or ssh://", host)
}

// resolveEngine is ResolveEngine with the environment and the home folder given.
func resolveEngine(name string, getenv func(string) string, home string) (Engine, error) {
	switch {
	case strings.Contains(name, "://"):
		return Engine{Host: name}, nil
	case name != "":
		return loadContext(name, getenv, home)
	case getenv("DOCKER_HOST") != "":
		return Engine{Host: getenv("DOCKER_HOST")}, nil
	case getenv("DOCKER_CONTEXT") != "":
		e, err := loadContext(getenv("DOCKER_CONTEXT"), getenv, home)
		if err != nil {
			return Engine{}, fmt.Errorf("DOCKER_CONTEXT: %w", err)
		}
		return e, nil
	}
	dir := configDir(getenv, home)
	current, err := currentContext(dir)
	if err != nil {
		return Engine{}, err
	}
	if current != "" {
		e, err := loadContext(current, getenv, home)
		if err != nil {
			return Engine{}, fmt.Errorf("the current context of %s: %w", filepath.Join(dir, "config.json"), err)
		}
		return e, nil
	}
	return Engine{Host: LocalEngine}, nil
}

// configDir is the docker CLI's configuration folder: DOCKER_CONFIG, else ~/.docker.
func configDir(getenv func(string) string, home string) string {
	if d := getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	return filepath.Join(home, ".docker")
}

// currentContext is the context `docker context use` made current in dir/config.json; empty
// when there is none, or no such file.
func currentContext(dir string) (string, error) {
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var c struct {
		CurrentContext string `json:"currentContext"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("%s: %v: fix it, or give the engine's address", path, err)
	}
	return c.CurrentContext, nil
}

// contextID is the folder of a context in the store: the SHA-256 of its name, as the docker CLI
// names it.
func contextID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// loadContext reads context name's docker endpoint from the store under the configuration
// folder: contexts/meta/<id>/meta.json, its TLS files in contexts/tls/<id>/docker/.
func loadContext(name string, getenv func(string) string, home string) (Engine, error) {
	if name == defaultContext {
		// The docker CLI's default context is the environment's engine.
		if h := getenv("DOCKER_HOST"); h != "" {
			return Engine{Host: h, Context: name}, nil
		}
		return Engine{Host: LocalEngine, Context: name}, nil
	}
	if !contextName.MatchString(name) {
		return Engine{}, fmt.Errorf("%q is neither an engine address (unix://, tcp://, ssh://) nor a docker context's name", name)
	}
	store := filepath.Join(configDir(getenv, home), "contexts")
	id := contextID(name)
	path := filepath.Join(store, "meta", id, "meta.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Engine{}, fmt.Errorf("no docker context %q in %s (known: %s): create it with `docker context create`, or give the engine's address (unix://, tcp://, ssh://)",
			name, store, strings.Join(knownContexts(store), ", "))
	}
	if err != nil {
		return Engine{}, fmt.Errorf("docker context %q: %v", name, err)
	}
	m, err := parseContextMeta(b)
	if err != nil {
		return Engine{}, fmt.Errorf("docker context %q: %s: %v", name, path, err)
	}
	if m.Name != name {
		return Engine{}, fmt.Errorf("docker context %q: %s names context %q: the store is damaged; recreate the context", name, path, m.Name)
	}
	e := Engine{Host: m.Host, Context: name}
	tlsDir := filepath.Join(store, "tls", id, "docker")
	t := ContextTLS{SkipVerify: m.SkipTLSVerify}
	for _, f := range []struct {
		file string
		to   *string
	}{{"ca.pem", &t.CA}, {"cert.pem", &t.Cert}, {"key.pem", &t.Key}} {
		p := filepath.Join(tlsDir, f.file)
		if _, err := os.Stat(p); err == nil {
			*f.to = p
		}
	}
	if (t.Cert == "") != (t.Key == "") {
		return Engine{}, fmt.Errorf("docker context %q: %s holds a certificate without its key, or a key without its certificate: give both (docker context update --docker cert=…,key=…)", name, tlsDir)
	}
	if t != (ContextTLS{}) {
		e.TLS = &t
	}
	return e, nil
}

// contextMeta is what iotbench reads of a context's meta.json.
type contextMeta struct {
	Name          string
	Host          string
	SkipTLSVerify bool
}

// parseContextMeta reads a context's meta.json: its name and its docker endpoint, which must
// name an address.
func parseContextMeta(b []byte) (contextMeta, error) {
	var raw struct {
		Name      string
		Endpoints map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return contextMeta{}, fmt.Errorf("not a context's metadata: %v", err)
	}
	ep, ok := raw.Endpoints["docker"]
	if !ok {
		return contextMeta{}, errors.New("the context has no docker endpoint")
	}
	var docker struct {
		Host          string
		SkipTLSVerify bool
	}
	if err := json.Unmarshal(ep, &docker); err != nil {
		return contextMeta{}, fmt.Errorf("its docker endpoint: %v", err)
	}
	if !strings.Contains(docker.Host, "://") {
		return contextMeta{}, fmt.Errorf("its docker endpoint's host %q is not an address (unix://, tcp://, ssh://)", docker.Host)
	}
	if strings.ContainsFunc(docker.Host, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return contextMeta{}, fmt.Errorf("its docker endpoint's host %q holds control characters", docker.Host)
	}
	return contextMeta{Name: raw.Name, Host: docker.Host, SkipTLSVerify: docker.SkipTLSVerify}, nil
}

// knownContexts lists the contexts of the store by name, default first: what an unknown name
// could have meant.
func knownContexts(store string) []string {
	var names []string
	dirs, _ := os.ReadDir(filepath.Join(store, "meta"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(store, "meta", d.Name(), "meta.json"))
		if err != nil {
			continue
		}
		// A folder that is not its name's (a damaged store) could not be resolved by that name.
		if m, err := parseContextMeta(b); err == nil && contextID(m.Name) == d.Name() {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return append([]string{defaultContext}, names...)
}

// tlsConfig is the client's TLS configuration from a context's files: its CA alone when it has
// one (as the docker CLI trusts it), else the system's; its certificate for client
// authentication.
func (t *ContextTLS) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.SkipVerify}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", t.CA)
		}
		cfg.RootCAs = pool
	}
	if t.Cert != "" {
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("the context's client certificate: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
