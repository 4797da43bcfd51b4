package kube

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A kubeconfig, as kubectl reads it: only what iotbench uses (a cluster's server and CA, a user's
// client certificate or bearer token, a context's namespace).
type kubeconfig struct {
	CurrentContext string         `yaml:"current-context"`
	Clusters       []namedCluster `yaml:"clusters"`
	Users          []namedUser    `yaml:"users"`
	Contexts       []namedContext `yaml:"contexts"`
}

type namedCluster struct {
	Name    string `yaml:"name"`
	Cluster struct {
		Server        string `yaml:"server"`
		CA            string `yaml:"certificate-authority"`
		CAData        string `yaml:"certificate-authority-data"`
		Insecure      bool   `yaml:"insecure-skip-tls-verify"`
		TLSServerName string `yaml:"tls-server-name"`
	} `yaml:"cluster"`
}

type namedUser struct {
	Name string `yaml:"name"`
	User struct {
		Cert      string         `yaml:"client-certificate"`
		CertData  string         `yaml:"client-certificate-data"`
		Key       string         `yaml:"client-key"`
		KeyData   string         `yaml:"client-key-data"`
		Token     string         `yaml:"token"`
		TokenFile string         `yaml:"tokenFile"`
		Exec      map[string]any `yaml:"exec"`
		Auth      map[string]any `yaml:"auth-provider"`
	} `yaml:"user"`
}

type namedContext struct {
	Name    string `yaml:"name"`
	Context struct {
		Cluster   string `yaml:"cluster"`
		User      string `yaml:"user"`
		Namespace string `yaml:"namespace"`
	} `yaml:"context"`
}

// Config is where a context of a kubeconfig points: the API server and how to be trusted by it.
type Config struct {
	// Context is the context's name, Server the API server's URL.
	Context, Server string
	// Namespace is the context's namespace; empty when it names none.
	Namespace string
	TLS       *tls.Config
	// Token is a bearer token; empty when the client certificate authenticates.
	Token string
}

// ConfigFiles are the kubeconfig files kubectl would read: path when given, else $KUBECONFIG's
// list, else ~/.kube/config.
func ConfigFiles(path string) []string {
	if path != "" {
		return []string{path}
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return filepath.SplitList(env)
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".kube", "config")}
}

// LoadConfig reads context name (empty: the current context) from the kubeconfig files, merged
// as kubectl merges them (the first file to name a cluster, user or context wins).
func LoadConfig(files []string, name string) (Config, error) {
	var merged kubeconfig
	read := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) && len(files) > 1 {
			continue
		}
		if err != nil {
			return Config{}, fmt.Errorf("reading the kubeconfig: %w", err)
		}
		var k kubeconfig
		if err := yaml.Unmarshal(data, &k); err != nil {
			return Config{}, fmt.Errorf("reading the kubeconfig %s: %w", f, err)
		}
		read++
		merged.CurrentContext = firstOf(merged.CurrentContext, k.CurrentContext)
		merged.Clusters = append(merged.Clusters, k.Clusters...)
		merged.Users = append(merged.Users, k.Users...)
		merged.Contexts = append(merged.Contexts, k.Contexts...)
	}
	if read == 0 {
		return Config{}, fmt.Errorf("no kubeconfig at %s: give one (--kubeconfig or KUBECONFIG)", strings.Join(files, ", "))
	}
	return merged.resolve(name, files)
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resolve finds context name (empty: the current one) and its cluster and user.
func (k kubeconfig) resolve(name string, files []string) (Config, error) {
	where := strings.Join(files, ", ")
	if name == "" {
		name = k.CurrentContext
		if name == "" {
			return Config{}, fmt.Errorf("the kubeconfig %s has no current context: name one (--kube CONTEXT)", where)
		}
	}
	ci := slices.IndexFunc(k.Contexts, func(x namedContext) bool { return x.Name == name })
	if ci < 0 {
		has := "none"
		if len(k.Contexts) > 0 {
			var names []string
			for _, x := range k.Contexts {
				names = append(names, x.Name)
			}
			has = strings.Join(names, ", ")
		}
		return Config{}, fmt.Errorf("the kubeconfig %s has no context %q (it has: %s)", where, name, has)
	}
	c := k.Contexts[ci].Context
	cfg := Config{Context: name, Namespace: c.Namespace, TLS: &tls.Config{MinVersion: tls.VersionTLS12}}
	cl := slices.IndexFunc(k.Clusters, func(x namedCluster) bool { return x.Name == c.Cluster })
	if cl < 0 {
		return Config{}, fmt.Errorf("context %q names cluster %q, which the kubeconfig %s does not have", name, c.Cluster, where)
	}
	cluster := k.Clusters[cl].Cluster
	if !strings.HasPrefix(cluster.Server, "https://") && !strings.HasPrefix(cluster.Server, "http://") {
		return Config{}, fmt.Errorf("cluster %q: server %q is not an http(s) URL", c.Cluster, cluster.Server)
	}
	cfg.Server = strings.TrimSuffix(cluster.Server, "/")
	cfg.TLS.ServerName = cluster.TLSServerName
	cfg.TLS.InsecureSkipVerify = cluster.Insecure
	ca, err := pemOf(cluster.CAData, cluster.CA)
	if err != nil {
		return Config{}, fmt.Errorf("cluster %q's certificate authority: %w", c.Cluster, err)
	}
	if ca != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return Config{}, fmt.Errorf("cluster %q's certificate authority holds no PEM certificate", c.Cluster)
		}
		cfg.TLS.RootCAs = pool
	}
	ui := slices.IndexFunc(k.Users, func(x namedUser) bool { return x.Name == c.User })
	if ui < 0 {
		return Config{}, fmt.Errorf("context %q names user %q, which the kubeconfig %s does not have", name, c.User, where)
	}
	u := k.Users[ui].User
	switch {
	case u.Exec != nil || u.Auth != nil:
		return Config{}, fmt.Errorf("user %q authenticates with a plugin (exec or auth-provider), which iotbench does not run: give it a kubeconfig with a client certificate or a token (for example `kubectl create token` of a service account)", c.User)
	case u.Token != "":
		cfg.Token = u.Token
	case u.TokenFile != "":
		b, err := os.ReadFile(u.TokenFile)
		if err != nil {
			return Config{}, fmt.Errorf("user %q's token: %w", c.User, err)
		}
		cfg.Token = strings.TrimSpace(string(b))
	}
	cert, err := pemOf(u.CertData, u.Cert)
	if err != nil {
		return Config{}, fmt.Errorf("user %q's client certificate: %w", c.User, err)
	}
	key, err := pemOf(u.KeyData, u.Key)
	if err != nil {
		return Config{}, fmt.Errorf("user %q's client key: %w", c.User, err)
	}
	if cert != nil || key != nil {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return Config{}, fmt.Errorf("user %q's client certificate and key: %w", c.User, err)
		}
		cfg.TLS.Certificates = []tls.Certificate{pair}
	}
	if cfg.Token == "" && cert == nil {
		return Config{}, fmt.Errorf("user %q has neither a client certificate nor a token", c.User)
	}
	return cfg, nil
}

// pemOf is a kubeconfig's base64 data, or else the file it names; nil when it gives neither.
func pemOf(data, file string) ([]byte, error) {
	if data != "" {
		return base64.StdEncoding.DecodeString(data)
	}
	if file != "" {
		return os.ReadFile(file)
	}
	return nil, nil
}
