package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Verify sends req once and checks the answer as the load would: a 2xx whose body passes check.
// A target that fails it is not loaded: its throughput would be errors.
func Verify(ctx context.Context, req Request, check Check, timeout time.Duration) error {
	if err := RequireLoopback(req.URL); err != nil {
		return err
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return err
	}
	hr.Header = req.Header.Clone()
	res, err := (&http.Client{Timeout: timeout}).Do(hr)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if res.StatusCode < 200 || res.StatusCode > 299 || !check.Pass(body) {
		return fmt.Errorf("%s %s answered %d %s, which does not pass the check (must contain %q)",
			req.Method, req.URL, res.StatusCode, excerpt(body), check.Contains)
	}
	return nil
}

func excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
