package verify

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

// TestRedirectsAreNotAnswers: every verification answers for the target's own endpoint; one that
// redirects to a page answering 200 fails, naming the 302.
func TestRedirectsAreNotAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to, moved := strings.CutPrefix(r.URL.Path, "/moved"); moved {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":1,"rows":5}`)
	}))
	defer srv.Close()
	checks := map[string]func(base string) error{
		"Request": func(base string) error {
			return Request(context.Background(), load.Request{Method: "GET", URL: base + "/ingest"}, load.NewCheck(`"id"`), time.Second)
		},
		"Run": func(base string) error {
			return Run(context.Background(), base, []Case{{Name: "stats", Method: "GET", Path: "/stats", Status: 200, Expect: func(answer) error { return nil }}})[0].Err
		},
		"StoredRows": func(base string) error {
			_, err := StoredRows(context.Background(), nil, base)
			return err
		},
	}
	for name, check := range checks {
		for _, c := range []struct {
			base, wantErr string
		}{{srv.URL, ""}, {srv.URL + "/moved", "302"}} {
			err := check(c.base)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("%s at %s: %v, want %q", name, c.base, err, c.wantErr)
			}
		}
	}
}
