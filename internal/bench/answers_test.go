package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAnswersIgnoresRedirects: find-max's "is the target still up?" is asked of the health
// endpoint itself, not of where it redirects.
func TestAnswersIgnoresRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "UP") })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, c := range []struct {
		path string
		want bool
	}{{"/ok", true}, {"/moved", false}} {
		if got := answers(context.Background(), srv.URL+c.path); got != c.want {
			t.Errorf("%s: answers = %v, want %v", c.path, got, c.want)
		}
	}
}
