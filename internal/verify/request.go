package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/tlscert"
)

// Tries is how many requests verification sends: one answer could pass by chance (a cache, a
// first-request path), three in a row do the same work every time.
const Tries = 3

// Request sends req Tries times and checks every answer against e: all of it but StoresRows and
// CallsDownstream, which only the load's totals show. More than the load's per-response
// substring test, since it runs only a few times. A target that fails is not loaded: its
// throughput would be errors, or work it does not do.
func Request(ctx context.Context, req load.Request, e load.Check, timeout time.Duration) error {
	if err := load.RequireLoopback(req.URL, req.Remote); err != nil {
		return err
	}
	hc, err := Client(req, timeout)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	for try := 1; try <= Tries; try++ {
		if err := once(ctx, hc, req, e); err != nil {
			return fmt.Errorf("%s %s, request %d of %d: %w", req.Method, req.URL, try, Tries, err)
		}
	}
	return nil
}

func once(ctx context.Context, hc *http.Client, req load.Request, e load.Check) error {
	hr, err := http.NewRequestWithContext(ctx, req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return err
	}
	hr.Header = req.Header.Clone()
	begin := time.Now()
	res, err := hc.Do(hr)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	took := time.Since(begin)
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("answered %d %s", res.StatusCode, excerpt(body))
	}
	if !e.Pass(body) {
		return fmt.Errorf("answered %s, which does not contain %s (check.contains)", excerpt(body), quoted(e.Contains))
	}
	if e.ContentType != "" {
		got, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
		if got != e.ContentType {
			return fmt.Errorf("Content-Type %q, want %s (check.content_type)", res.Header.Get("Content-Type"), e.ContentType)
		}
	}
	if len(e.JSONFields) > 0 {
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			return fmt.Errorf("answer is not a JSON object (%v): %s", err, excerpt(body))
		}
		for _, f := range e.JSONFields {
			if doc[f] == nil {
				return fmt.Errorf("answer has no %q field (check.json_fields): %s", f, excerpt(body))
			}
		}
	}
	if took < e.MinLatency {
		return fmt.Errorf("answered in %s, sooner than the %s its work takes (check.min_latency): the work was skipped", took.Round(time.Microsecond), e.MinLatency)
	}
	return nil
}

// newClient sends verification's requests; it never follows a redirect (load.NoRedirects).
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, CheckRedirect: load.NoRedirects}
}

// Client is an HTTP client that speaks req's protocol and nothing else, trusting req.TLS's CA
// (RootCAs) alone over TLS.
func Client(req load.Request, timeout time.Duration) (*http.Client, error) {
	hc := newClient(timeout)
	p := req.Protocol.Or()
	if p == protocol.HTTP1 {
		return hc, nil
	}
	var set *tlscert.Set
	if p.TLS() {
		if req.TLS == nil || req.TLS.RootCAs == nil {
			return nil, fmt.Errorf("%s needs the run's CA (the request's TLS configuration)", p)
		}
		set = &tlscert.Set{Pool: req.TLS.RootCAs}
	}
	t, err := tlscert.Transport(p, set)
	if err != nil {
		return nil, err
	}
	hc.Transport = &expectProto{rt: t, protocol: p}
	return hc, nil
}

func quoted(subs []string) string {
	var b bytes.Buffer
	for i, s := range subs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", s)
	}
	return b.String()
}

// StoredRows reads how many readings the target holds, from GET /stats (docs/contract.md), with
// hc (nil: plaintext HTTP/1.1).
func StoredRows(ctx context.Context, hc *http.Client, baseURL string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/stats", nil)
	if err != nil {
		return 0, err
	}
	if hc == nil {
		hc = newClient(10 * time.Second)
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET /stats: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var stats struct {
		Rows *int64 `json:"rows"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &stats) != nil || stats.Rows == nil {
		return 0, fmt.Errorf(`GET /stats answered %d %s, want 200 {"rows":n}`, res.StatusCode, excerpt(body))
	}
	return *stats.Rows, nil
}

// ErrUnstored is what RowsGrew's error wraps when fewer rows were stored than writes succeeded.
var ErrUnstored = errors.New("the target answered writes it did not store")

// RowsGrew checks that the rows stored grew as the successful writes say: by at least successes,
// and by at most successes + failures (a request that timed out may still have stored its row).
func RowsGrew(before, after, successes, failures int64) error {
	return CountGrew("/stats rows", before, after, successes, failures)
}

// CountGrew is RowsGrew for rows counted elsewhere (what names them: the database server's).
func CountGrew(what string, before, after, successes, failures int64) error {
	grew := after - before
	want := fmt.Sprintf("%d", successes)
	if failures > 0 {
		want = fmt.Sprintf("%d to %d (%d successes, %d failed requests that may have stored)", successes, successes+failures, successes, failures)
	}
	switch {
	case grew < successes:
		return fmt.Errorf("%s grew by %d (%d → %d), want %s: %w", what, grew, before, after, want, ErrUnstored)
	case grew > successes+failures:
		return fmt.Errorf("%s grew by %d (%d → %d), want %s: something else wrote to the target", what, grew, before, after, want)
	}
	return nil
}
