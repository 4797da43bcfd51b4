package plan

import (
	"path/filepath"
	"testing"

	"github.com/iotbench/iotbench/internal/golden"
)

// TestMakeAdHocNames: the name of a --url run's target is written into its results file and every
// report of it, so only a name of the documented set is taken; the error says which and why.
func TestMakeAdHocNames(t *testing.T) {
	for _, tc := range []struct{ url, name, want string }{
		{"http://127.0.0.1:18999/ingest", "", "127.0.0.1:18999"},
		{"http://localhost:8080/", "", "localhost:8080"},
		{"http://[::1]:8080/", "", "[::1]:8080"},
		{"http://127.0.0.1:18999/", "spring-mvc_v2", "spring-mvc_v2"},
	} {
		p, err := MakeAdHoc(AdHoc{URL: tc.url, Name: tc.name})
		if err != nil {
			t.Errorf("MakeAdHoc(%s, --name %q): %v", tc.url, tc.name, err)
			continue
		}
		if got := p.Cells[0].Target; got != tc.want {
			t.Errorf("MakeAdHoc(%s, --name %q) names its target %q, want %q", tc.url, tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ file, name string }{
		{"escape-codes", "stub\x1b[2J\x1b[1;1Hequivalent"},
		{"html-tag", "<img src=x onerror=alert(1)>"},
		{"newline", "stub\n  • candidate: equivalent"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := MakeAdHoc(AdHoc{URL: "http://127.0.0.1:18999/", Name: tc.name})
			if err == nil {
				t.Fatalf("MakeAdHoc took --name %q", tc.name)
			}
			golden.Check(t, filepath.Join("testdata", "adhoc-name", tc.file+".golden"), []byte(err.Error()+"\n"))
		})
	}
}
