package reference

import (
	"io"
	"net/http"
	"testing"
	"time"
)

func TestQuantileInClosedForm(t *testing.T) {
	s := Shape{Delay: 2 * time.Millisecond, Freeze: 50 * time.Millisecond, Period: 500 * time.Millisecond}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 2 * time.Millisecond},
		{0.9, 2 * time.Millisecond},
		{0.95, 27 * time.Millisecond},
		{0.99, 47 * time.Millisecond},
	} {
		if got := s.Quantile(c.q); (got - c.want).Abs() > time.Microsecond {
			t.Errorf("p%g = %v, want %v", 100*c.q, got, c.want)
		}
	}
	if got := (Shape{Delay: time.Millisecond}).Quantile(0.99); got != time.Millisecond {
		t.Errorf("fixed delay p99 = %v, want 1ms", got)
	}
}

// The waits the server applies, over a period's arrivals, are the distribution Quantile says.
func TestWaitsMatchTheQuantiles(t *testing.T) {
	s := Shape{Delay: time.Millisecond, Freeze: 100 * time.Millisecond, Period: time.Second}
	n := 10000
	var frozen int
	var sum time.Duration
	for i := range n {
		w := s.wait(time.Duration(i) * time.Second / time.Duration(n))
		if w > s.Delay {
			frozen++
			sum += w - s.Delay
		}
	}
	if frozen != n/10 {
		t.Errorf("%d of %d arrivals frozen, want a tenth", frozen, n)
	}
	if mean := sum / time.Duration(frozen); (mean - 50*time.Millisecond).Abs() > 100*time.Microsecond {
		t.Errorf("mean wait of the frozen %v, want half the freeze", mean)
	}
}

func TestServerAnswers(t *testing.T) {
	s, err := Start(Shape{Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != Body {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
}
