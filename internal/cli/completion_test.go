package cli

import (
	"context"
	"strings"
	"testing"
)

// TestCompletion asks cobra's completion entry point what the shell would offer.
func TestCompletion(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string // names offered, in order; the directive line is not compared
		not  []string
	}{
		{"scenarios", []string{"run", "--file", "../../scenarios.yaml", "--scenario", "io-heavy"}, []string{"io-heavy", "io-heavy-js"}, nil},
		{"the scenario's targets", []string{"run", "--file", "../../scenarios.yaml", "--scenario", "io-heavy", "--targets", "fastify,spring-mvc-p"},
			[]string{"fastify,spring-mvc-platform"}, []string{"fastify,fastify"}},
		{"verify's targets", []string{"verify", "--file", "../../scenarios.yaml", "--targets", "bun-"}, []string{"bun-native"}, nil},
		{"no file", []string{"run", "--file", "nope.yaml", "--scenario", ""}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, out, _ := streams()
			if code := Main(context.Background(), append([]string{"__complete"}, c.args...), s); code != 0 {
				t.Fatalf("exit %d", code)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if !strings.HasPrefix(l, ":") && l != "" {
					got = append(got, strings.SplitN(l, "\t", 2)[0])
				}
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("offered %q, want %q", got, c.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	s, out, _ := streams()
	if code := Main(context.Background(), []string{"--version"}, s); code != 0 || !strings.HasPrefix(out.String(), "iotbench ") {
		t.Errorf("exit %d, printed %q", code, out)
	}
	s2, out2, _ := streams()
	Main(context.Background(), []string{"version"}, s2)
	if out.String() != out2.String() {
		t.Errorf("--version %q and version %q differ", out, out2)
	}
}
