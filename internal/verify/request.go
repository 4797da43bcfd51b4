package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

// Request sends req once and checks the answer as the load will: a 2xx whose body passes check.
// A target that fails it is not loaded: its throughput would be errors.
func Request(ctx context.Context, req load.Request, check load.Check, timeout time.Duration) error {
	if err := load.RequireLoopback(req.URL); err != nil {
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
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode < 200 || res.StatusCode > 299 || !check.Pass(body) {
		return fmt.Errorf("%s %s answered %d %s, which does not pass the check (must contain %q)",
			req.Method, req.URL, res.StatusCode, excerpt(body), check.Contains)
	}
	return nil
}
