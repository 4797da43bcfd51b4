//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/profile"
	"github.com/iotbench/iotbench/internal/timeline"
)

// TestFindMaxNamesItsLimitsAndProfilesTheMaximum searches io-heavy's maximum on one JVM and one
// JavaScript target with --profile: each step names its limit from the target's signals, each
// search leaves a profile at its maximum with its JIT frames named from the runtime's own map
// (V8's; HotSpot's, written as it exits), and the report draws both flame graphs in Chromium.
// Short steps and a coarse resolution: the chain, not the figures.
func TestFindMaxNamesItsLimitsAndProfilesTheMaximum(t *testing.T) {
	mapsBefore, _ := filepath.Glob("/tmp/perf-*.map")
	out := t.TempDir()
	code, _, log := iotbench(t, context.Background(), "run", "--scenario", "io-heavy", "--targets", "spring-mvc-virtual,fastify",
		"--find-max", "--trials", "1", "--step", "2s", "--warmup", "10s", "--resolution", "50%", "--profile",
		"--keep-disturbed", "--calibration=false", "--out", out)
	t.Log(log)
	if code != 0 {
		// The notes name each search's end; CI keeps only the log's tail.
		var notes []string
		for line := range strings.Lines(log) {
			if strings.HasPrefix(line, "  • ") {
				notes = append(notes, line)
			}
		}
		t.Fatalf("exit status %d, want 0:\n%s", code, strings.Join(notes, ""))
	}
	rows := readRows(t, out)
	atMax := map[string]bool{}
	for _, r := range rows {
		if !r.Loaded() {
			t.Errorf("%s step %d not loaded: %s", r.Target, r.Trial, r.InvalidReason)
			continue
		}
		// Every loaded step names what limited it, from the signals its runtime gave.
		if l := r.Limit(); l.Evidence == "" || !r.SignalsRead {
			t.Errorf("%s at %d rps: limit %q, signals read %v (%s)", r.Target, r.RequestedRPS, l, r.SignalsRead, r.SignalsNote)
		}
		if r.Valid {
			atMax[r.Target] = true
		}
	}
	csvs, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	profiles, err := profile.Read(timeline.Dir(csvs[0]))
	if err != nil {
		t.Fatal(err)
	}
	// A JIT frame of the target's own code, named: Spring's dispatcher, fastify's routing.
	named := map[string]*regexp.Regexp{
		"spring-mvc-virtual": regexp.MustCompile(`org\.springframework\.[^;]*_\[j\]`),
		"fastify":            regexp.MustCompile(`\(fastify/[^;]*_\[j\]`),
	}
	seen := map[string]bool{}
	for _, p := range profiles {
		seen[p.Target] = true
		if p.Stacks.Total < 100 || p.Processes < 1 || p.Named != p.Processes || p.Cost.CPU <= 0 {
			t.Errorf("%s: %d samples, %d of %d processes with a symbol map, perf %v: want a profile with its maps", p.Target, p.Stacks.Total, p.Named, p.Processes, p.Cost.CPU)
		}
		found := false
		for stack := range p.Stacks.Stacks {
			if named[p.Target] != nil && named[p.Target].MatchString(stack) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: no JIT frame of its code named in %d stacks (%v)", p.Target, len(p.Stacks.Stacks), p.Stacks.Top(5))
		}
	}
	for target := range atMax {
		if !seen[target] {
			t.Errorf("%s found a maximum and left no profile", target)
		}
	}
	// The maps placed for perf are gone.
	mapsAfter, _ := filepath.Glob("/tmp/perf-*.map")
	if len(mapsAfter) > len(mapsBefore) {
		t.Errorf("symbol maps left in /tmp: %v (before: %v)", mapsAfter, mapsBefore)
	}

	report := filepath.Join(out, "report.html")
	if code, _, log := iotbench(t, context.Background(), "report", csvs[0], "--html", report); code != 0 {
		t.Fatalf("report: exit status %d\n%s", code, log)
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<figure class="flame"`); n != len(profiles) || n == 0 {
		t.Errorf("%d flame graphs in the report, want one a profile (%d)", n, len(profiles))
	}
	// Chromium parses the page: each flame graph is an SVG of boxes in its DOM.
	dom, err := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir="+filepath.Join(out, "chromium"), "--dump-dom", "file://"+report).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	figures := regexp.MustCompile(`(?s)<figure class="flame".*?</figure>`).FindAllString(string(dom), -1)
	if len(figures) != len(profiles) {
		t.Fatalf("%d flame figures in Chromium's DOM, want %d", len(figures), len(profiles))
	}
	for _, f := range figures {
		if n := strings.Count(f, "<rect"); n < 20 {
			t.Errorf("a flame graph of %d boxes in Chromium's DOM", n)
		}
	}
	if left := leftovers(t); left != "" {
		t.Errorf("containers left behind: %s", left)
	}
}
