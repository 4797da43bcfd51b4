package load

import (
	"testing"
	"time"
)

func TestParseWarmup(t *testing.T) {
	cases := []struct {
		text string
		want Warmup
		err  bool
	}{
		{"10s", Warmup{Length: 10 * time.Second}, false},
		{"0s", Warmup{}, false},
		{"auto", Warmup{Length: DefaultWarmupMax, Auto: true}, false},
		{"auto:90s", Warmup{Length: 90 * time.Second, Auto: true}, false},
		{"auto:", Warmup{}, true},
		{"auto90s", Warmup{}, true},
		{"auto:0s", Warmup{}, true},
		{"auto:-1s", Warmup{}, true},
		{"sometimes", Warmup{}, true},
	}
	for _, c := range cases {
		got, err := ParseWarmup(c.text)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseWarmup(%q) = %+v, %v; want %+v, error %v", c.text, got, err, c.want, c.err)
		}
	}
}

// FuzzParseWarmup: whatever the text, a warm-up read is written back as text that reads the same.
func FuzzParseWarmup(f *testing.F) {
	for _, s := range []string{"10s", "0s", "auto", "auto:90s", "auto:1m", "1h30m", "auto:1m0.5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		w, err := ParseWarmup(text)
		if err != nil {
			return
		}
		back, err := ParseWarmup(w.String())
		if err != nil || back != w {
			t.Fatalf("%q read as %+v, written %q, read back as %+v (%v)", text, w, w.String(), back, err)
		}
	})
}
