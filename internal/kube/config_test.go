package kube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/golden"
)

// selfSigned is a PEM certificate and key, for a kubeconfig's CA and client certificate.
func selfSigned(t testing.TB) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func TestLoadConfig(t *testing.T) {
	cert, key := selfSigned(t)
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := `apiVersion: v1
kind: Config
current-context: certs
clusters:
- name: local
  cluster: {server: "https://10.255.0.1:6443/", certificate-authority-data: ` + b64(cert) + `}
- name: plain
  cluster: {server: "10.0.0.1:6443"}
- name: bad-ca
  cluster: {server: "https://10.0.0.1", certificate-authority-data: ` + b64([]byte("not pem")) + `}
users:
- name: admin
  user: {client-certificate-data: ` + b64(cert) + `, client-key-data: ` + b64(key) + `}
- name: token
  user: {token: abc}
- name: token-file
  user: {tokenFile: ` + tokenFile + `}
- name: plugin
  user: {exec: {command: gke-gcloud-auth-plugin}}
- name: nothing
  user: {}
contexts:
- name: certs
  context: {cluster: local, user: admin, namespace: bench}
- name: token
  context: {cluster: local, user: token}
- name: token-file
  context: {cluster: local, user: token-file}
- name: plugin
  context: {cluster: local, user: plugin}
- name: nothing
  context: {cluster: local, user: nothing}
- name: no-cluster
  context: {cluster: gone, user: admin}
- name: no-user
  context: {cluster: local, user: gone}
- name: not-a-url
  context: {cluster: plain, user: token}
- name: bad-ca
  context: {cluster: bad-ca, user: token}
`
	file := filepath.Join(dir, "config")
	if err := os.WriteFile(file, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, name := range []string{"", "token", "token-file", "plugin", "nothing", "no-cluster", "no-user", "not-a-url", "bad-ca", "absent"} {
		cfg, err := LoadConfig([]string{file}, name)
		out.WriteString("context " + name + ": ")
		if err != nil {
			out.WriteString("error: " + strings.ReplaceAll(err.Error(), dir, "DIR") + "\n")
			continue
		}
		certs := len(cfg.TLS.Certificates)
		out.WriteString(strings.Join([]string{"context=" + cfg.Context, "server=" + cfg.Server, "namespace=" + cfg.Namespace, "token=" + cfg.Token,
			"client-certs=" + string(rune('0'+certs)), "ca=" + map[bool]string{true: "yes", false: "no"}[cfg.TLS.RootCAs != nil]}, " ") + "\n")
	}
	golden.Check(t, filepath.Join("testdata", "kubeconfig.golden"), []byte(out.String()))
}

func TestLoadConfigMergesFilesAsKubectl(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a")
	second := filepath.Join(dir, "b")
	os.WriteFile(first, []byte(`clusters: [{name: c, cluster: {server: "https://first"}}]
users: [{name: u, user: {token: first}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
`), 0o600)
	os.WriteFile(second, []byte(`current-context: x
clusters: [{name: c, cluster: {server: "https://second"}}]
users: [{name: u, user: {token: second}}]
`), 0o600)
	// The first file to name a cluster wins; the current context may come from a later file; a
	// missing file in a list is skipped.
	cfg, err := LoadConfig([]string{first, filepath.Join(dir, "absent"), second}, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server != "https://first" || cfg.Token != "first" {
		t.Errorf("got server %s token %s, want the first file's", cfg.Server, cfg.Token)
	}
	if _, err := LoadConfig([]string{filepath.Join(dir, "absent")}, ""); err == nil || !strings.Contains(err.Error(), "reading the kubeconfig") {
		t.Errorf("a single missing file: %v", err)
	}
}

// FuzzKubeconfig: whatever a kubeconfig holds, reading it fails or gives a server to call.
func FuzzKubeconfig(f *testing.F) {
	f.Add([]byte("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {token: t}}]\n"))
	f.Add([]byte("users: [{name: u, user: {client-certificate-data: '!!', client-key-data: 'AA=='}}]"))
	f.Add([]byte("clusters: {a: 1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig([]string{file}, "")
		if err != nil {
			return
		}
		if !strings.HasPrefix(cfg.Server, "http://") && !strings.HasPrefix(cfg.Server, "https://") {
			t.Errorf("server %q accepted", cfg.Server)
		}
		if cfg.Token == "" && len(cfg.TLS.Certificates) == 0 {
			t.Error("a config that authenticates with nothing accepted")
		}
	})
}
