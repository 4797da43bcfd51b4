// Package tlscert makes the certificates of one run: a throwaway certificate authority and a leaf
// certificate for the targets (names localhost and 127.0.0.1), written into a folder that is
// mounted into each target, and the CA as a pool for iotbench's own clients. Nothing is committed
// or fetched; the CA's private key is never written anywhere and is gone when the run ends, so no
// other certificate can ever be signed by it (docs/protocols.md).
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files of a Set's folder. A target reads CertFile and KeyFile (mounted at MountDir); CAFile
// is for clients outside iotbench (curl --cacert).
const (
	CertFile = "cert.pem"
	KeyFile  = "key.pem"
	CAFile   = "ca.pem"
	// MountDir is where a target finds CertFile and KeyFile, read-only.
	MountDir = "/run/iotbench/tls"
)

// Validity is how long a run's certificates are valid: long enough for the longest run, short
// enough that a copy left behind is soon worthless. They start an hour early, for clock skew.
const Validity = 7 * 24 * time.Hour

// Set is one run's certificates.
type Set struct {
	// Dir holds CertFile, KeyFile and CAFile.
	Dir string
	// Pool holds the run's CA alone: a client trusting it trusts the run's targets and nothing else.
	Pool *x509.CertPool
}

// New makes a CA and a leaf signed by it into dir (created if missing). The files are readable by
// everyone, because a target runs as its own unprivileged user: keep dir inside a folder only
// its owner can enter (MkdirTemp's), which a bind mount into a container does not need.
func New(dir string, now time.Time) (*Set, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := now.Add(-time.Hour), now.Add(Validity)
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "iotbench run CA " + now.UTC().Format(time.RFC3339)},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("making the run's CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("making the targets' certificate: %w", err)
	}
	// PKCS #8: the one private-key encoding every target's stack reads (JSSE, OpenSSL, BoringSSL).
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the certificates' folder: %w", err)
	}
	files := []struct {
		name, kind string
		der        []byte
	}{{CertFile, "CERTIFICATE", leafDER}, {KeyFile, "PRIVATE KEY", keyDER}, {CAFile, "CERTIFICATE", caDER}}
	for _, f := range files {
		b := pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der})
		if err := os.WriteFile(filepath.Join(dir, f.name), b, 0o644); err != nil {
			return nil, fmt.Errorf("writing the run's %s: %w", f.name, err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &Set{Dir: dir, Pool: pool}, nil
}

// Load reads the CA of a Set that New wrote into dir.
func Load(dir string) (*Set, error) {
	b, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, fmt.Errorf("reading the run's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New(filepath.Join(dir, CAFile) + " holds no PEM certificate")
	}
	return &Set{Dir: dir, Pool: pool}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n.Add(n, big.NewInt(1))
}
