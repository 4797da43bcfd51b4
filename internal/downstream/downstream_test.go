package downstream

import (
	"io"
	"net/http"
	"testing"
	"time"
)

func TestServesTheContractsAnswerAfterItsDelayAndCounts(t *testing.T) {
	s, err := Start(Delay)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 3; i++ {
		began := time.Now()
		resp, err := http.Get(s.URL())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// A lower bound only: a wait can be late on a busy machine, never early.
		if took := time.Since(began); took < Delay || string(body) != `{"ok":true}` || resp.StatusCode != 200 {
			t.Errorf("call %d: %d %q after %v, want 200 {\"ok\":true} after at least %v", i, resp.StatusCode, body, took, Delay)
		}
		if got := s.Calls(); got != int64(i) {
			t.Errorf("%d calls counted, want %d", got, i)
		}
	}
	resp, err := http.Post(s.URL(), "text/plain", nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || s.Calls() != 3 {
			t.Errorf("POST: %d, %d calls; want 405 and not counted", resp.StatusCode, s.Calls())
		}
	}
}
