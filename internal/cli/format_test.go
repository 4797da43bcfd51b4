package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The terminal format is called table in every command. compare, history changes and claims,
// which called it text, still take --format text: the same output and exit status as --format
// table, with a note on stderr, pinned with the output by a golden file per command.
func TestFormatTextIsTable(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goldens := filepath.Join(wd, "testdata", "format")
	cases := []struct {
		name string
		// setup enters the folder the command runs in and gives its arguments before --format.
		setup func(t *testing.T) []string
	}{
		{"compare", func(t *testing.T) []string {
			t.Chdir(filepath.Join(wd, "testdata", "compare"))
			return []string{"compare", "--fail-on", "p50:+5%", "base-20ms.csv", "slower-30ms.csv"}
		}},
		{"history-changes", func(t *testing.T) []string {
			dir := t.TempDir()
			t.Chdir(dir)
			files := writeSeries(t, dir)
			if code := Main(context.Background(), append([]string{"history", "add", "--store", "h.db"}, files...), Streams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}}); code != ExitOK {
				t.Fatalf("history add: exit %d", code)
			}
			return []string{"history", "changes", "--store", "h.db", "--metric", "p50"}
		}},
		{"claims", func(t *testing.T) []string {
			t.Chdir(wd)
			return []string{"claims", "second", "--file", testScenarios, "--experiments", testExperiments, "--results", "testdata/format/no-runs"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.setup(t)
			run := func(format string) (string, string, int) {
				s, out, errOut := streams()
				code := Main(context.Background(), append(args, "--format", format), s)
				return out.String(), errOut.String(), code
			}
			tableOut, tableErr, tableCode := run("table")
			textOut, textErr, textCode := run("text")
			const note = "iotbench: --format text is now called table\n"
			switch {
			case textOut != tableOut:
				t.Errorf("--format text printed:\n%s\nwant --format table's:\n%s", textOut, tableOut)
			case textCode != tableCode:
				t.Errorf("--format text: exit %d, --format table: exit %d", textCode, tableCode)
			case textErr != note+tableErr:
				t.Errorf("--format text's stderr %q, want the note, then --format table's %q", textErr, tableErr)
			case strings.Contains(tableErr, "text"):
				t.Errorf("--format table's stderr %q: the note is for text alone", tableErr)
			}
			checkGolden(t, filepath.Join(goldens, c.name+".golden"), fmt.Sprintf("$ iotbench %s --format text\n%s--- stderr\n%s--- exit %d\n", strings.Join(args, " "), textOut, textErr, textCode))
		})
	}
}
