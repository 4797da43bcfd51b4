package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
)

// makeCert writes a throwaway CA's certificate for 127.0.0.1, and its key, into dir (cert.pem,
// key.pem) for nginx, and returns the pool that trusts it, for the engine. ECDSA P-256, what a
// production certificate for a service usually is.
func makeCert(dir string) (*x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "benchgen"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool, nil
}

// httpsRequest is the engine's request to nginx over TLS.
func (n *nginx) httpsRequest() load.Request {
	return load.Request{Method: "GET", URL: n.TLSURL, Protocol: protocol.HTTPS, TLS: &tls.Config{RootCAs: n.roots}}
}

// measureTLS runs the https steps: wrk over TLS with the closed-loop connections (the
// reference), the engine closed loop with as many, then at each of o.tlsRates wrk2 over TLS
// (when given) and the engine open loop.
func measureTLS(ctx context.Context, o options, srv *nginx) ([]row, error) {
	var rows []row
	before, watch := srv.cpu(), watchCPUs(o.clientCPU, o.serverCPU)
	w, err := runWrk(ctx, o.wrk, o.clientCPU, o.conns, o.step, srv.TLSURL)
	if err != nil {
		return rows, err
	}
	server := srv.cpu() - before
	others, known := watch.others(w.CPU+server, w.Wall)
	valid := "yes"
	if w.Errors > 0 {
		valid = fmt.Sprintf("%d errors", w.Errors)
	}
	rows = append(rows, row{
		client: "wrk", load: fmt.Sprintf("closed %d https", o.conns), rps: w.RPS, tls: true, isWrkReference: true,
		clientCPU: cores(w.CPU, w.Wall), serverCPU: cores(server, w.Wall), p50: w.P50, p99: w.P99,
		valid: valid, others: others, othersKnown: known,
	})
	fmt.Fprintf(os.Stderr, "wrk -c%d https: %.0f rps\n", o.conns, w.RPS)
	models := []load.Model{{Connections: o.conns}}
	for _, r := range o.tlsRates {
		models = append(models, load.Model{Rate: r, ExpectedLatency: time.Millisecond})
	}
	for _, m := range models {
		if o.wrk2 != "" && m.Mode() == load.Open {
			r, err := wrk2Row(ctx, o, srv, m.Rate, o.conns, srv.TLSURL)
			if err != nil {
				return rows, err
			}
			r.tls, r.load = true, r.load+" https"
			rows = append(rows, r)
		}
		e, err := runEngine(ctx, srv, srv.httpsRequest(), load.NewCheck(nginxBody), m, []int{o.clientCPU, o.serverCPU}, o.warmup, o.step)
		if err != nil {
			return rows, err
		}
		r := engineRow(m, e)
		r.tls, r.load = true, r.load+" https"
		if e.res.Connections.TLSVersion != "" {
			r.load += " (" + e.res.Connections.TLSVersion + ", " + e.res.Connections.TLSCipher + ")"
		}
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "iotbench %s: %.0f rps; %d connections opened in the step (connect p99 %v)\n", r.load, r.rps, e.res.Connections.Opened, e.res.Connections.Connect.P99.Round(time.Microsecond))
	}
	return rows, nil
}

// h2loadResult is what one h2load run printed, and the CPU it used.
type h2loadResult struct {
	RPS          float64
	Done, Failed int64
	CPU, Wall    time.Duration
}

// runH2load runs h2load (Debian's nghttp2-client) with one thread pinned to cpu, conns
// connections of streams streams each, for d.
func runH2load(ctx context.Context, bin string, cpu, conns, streams int, d time.Duration, url string) (h2loadResult, error) {
	cmd := exec.CommandContext(ctx, "taskset", "-c", strconv.Itoa(cpu),
		bin, "-t1", "-c"+strconv.Itoa(conns), "-m"+strconv.Itoa(streams), "-D", strconv.Itoa(int(d.Seconds())), url)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(began)
	if err != nil {
		return h2loadResult{}, fmt.Errorf("h2load -c%d -m%d: %v\n%s", conns, streams, err, out)
	}
	r, err := parseH2load(string(out))
	if err != nil {
		return h2loadResult{}, fmt.Errorf("h2load: %v; its output was:\n%s", err, out)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r.Wall = wall
	return r, nil
}

// parseH2load reads "finished in 3.00s, 12345.67 req/s, …" and "requests: … N succeeded, N failed".
func parseH2load(out string) (h2loadResult, error) {
	var r h2loadResult
	var haveRPS bool
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && f[0] == "finished" && f[4] == "req/s,":
			v, err := strconv.ParseFloat(f[3], 64)
			if err != nil {
				return r, fmt.Errorf("req/s %q: %v", f[3], err)
			}
			r.RPS, haveRPS = v, true
		case len(f) >= 11 && f[0] == "requests:":
			r.Done, _ = strconv.ParseInt(f[7], 10, 64)
			r.Failed, _ = strconv.ParseInt(f[9], 10, 64)
		}
	}
	if !haveRPS {
		return r, fmt.Errorf("no \"finished in …, … req/s\" line")
	}
	return r, nil
}

// measureH2 runs the h2 steps: h2load with the closed-loop connections and o.h2Streams streams
// each (the reference), then the engine closed loop with as many.
func measureH2(ctx context.Context, o options, srv *nginx) ([]row, error) {
	before, watch := srv.cpu(), watchCPUs(o.clientCPU, o.serverCPU)
	w, err := runH2load(ctx, o.h2load, o.clientCPU, o.conns, o.h2Streams, o.step, srv.TLSURL)
	if err != nil {
		return nil, err
	}
	server := srv.cpu() - before
	others, known := watch.others(w.CPU+server, w.Wall)
	valid := "yes"
	if w.Failed > 0 {
		valid = fmt.Sprintf("%d failed", w.Failed)
	}
	label := fmt.Sprintf("closed %d×%d h2", o.conns, o.h2Streams)
	rows := []row{{
		client: "h2load", load: label, rps: w.RPS, tls: true, h2: true, isWrkReference: true,
		clientCPU: cores(w.CPU, w.Wall), serverCPU: cores(server, w.Wall), valid: valid, others: others, othersKnown: known,
	}}
	fmt.Fprintf(os.Stderr, "h2load -c%d -m%d: %.0f rps\n", o.conns, o.h2Streams, w.RPS)
	req := srv.httpsRequest()
	req.Protocol, req.Streams = protocol.H2, o.h2Streams
	m := load.Model{Connections: o.conns}
	e, err := runEngine(ctx, srv, req, load.NewCheck(nginxBody), m, []int{o.clientCPU, o.serverCPU}, o.warmup, o.step)
	if err != nil {
		return rows, err
	}
	r := engineRow(m, e)
	r.tls, r.h2, r.load = true, true, label
	rows = append(rows, r)
	fmt.Fprintf(os.Stderr, "iotbench %s: %.0f rps; %d connections opened in the step (connect p99 %v)\n", r.load, r.rps, e.res.Connections.Opened, e.res.Connections.Connect.P99.Round(time.Microsecond))
	return rows, nil
}
