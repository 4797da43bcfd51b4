package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
)

// A climb towards an earlier search's boundary runs its whole length on a target that holds it,
// and ends once 3 seconds in a row break the SLO on one that no longer does, saying so (judged
// once the second after them has closed too: after 5 s of the climb's 8).
func TestAClimbEndsWhereTheTargetBreaks(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		broke   bool
	}{
		{"holding 640 rps", limited(32, 50*time.Millisecond), false},
		{"answering in 300 ms", func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(300 * time.Millisecond)
			io.WriteString(w, `{"id":1}`)
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			log := &strings.Builder{}
			r := &Runner{Log: log}
			p := planFor("t")
			in := &instance{r: r, p: p, c: p.Cells[0], ctr: &fakeInstance{srv: srv}}
			m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01}, Step: 2 * time.Second}
			// 10 → 160 rps, doubling every 2 s: 8 s.
			begin := time.Now()
			broke, err := r.climb(context.Background(), in, p.Cells[0], 10, 160, m)
			took := time.Since(begin)
			t.Logf("took %s:\n%s", took, log)
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(log.String(), "the climb ended after ")
			if broke != c.broke || said != c.broke {
				t.Errorf("broke %v, the log says so %v; want %v", broke, said, c.broke)
			}
			if !c.broke && took < 8*time.Second {
				t.Errorf("the climb took %s, want its whole 8 s", took)
			}
		})
	}
}
