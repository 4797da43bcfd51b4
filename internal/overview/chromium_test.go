package overview

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/flame"
	"github.com/iotbench/iotbench/internal/profile"
)

var screenshot = flag.String("screenshot", "", "also save a PNG of the fixture report there")

// checker is put in a copy of the report, never in the report itself: it records every error
// and console error from the first byte on, and when the page has loaded, how each chart drew.
const checker = `<script>
window.__errors = [];
window.addEventListener('error', e => __errors.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || 'unknown')), true);
for (const level of ['error', 'warn']) {
  const orig = console[level];
  console[level] = (...a) => { __errors.push('console.' + level + ': ' + a.join(' ')); orig.apply(console, a); };
}
window.addEventListener('load', () => {
  const drawn = sel => [...document.querySelectorAll(sel)].map(f => {
    const svg = f.querySelector('svg');
    const r = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    return {chart: f.dataset.chart, width: r.width, height: r.height, rects: svg ? svg.querySelectorAll('rect').length : 0,
      paths: svg ? svg.querySelectorAll('path').length : 0, texts: svg ? svg.querySelectorAll('text').length : 0};
  });
  const pre = document.createElement('pre');
  pre.id = 'iotbench-check';
  pre.textContent = JSON.stringify({charts: drawn('figure.chart'), flames: drawn('figure.flame'), errors: __errors,
    fetched: performance.getEntriesByType('resource').map(e => e.name)});
  document.body.appendChild(pre);
});
</script>`

// chromiumFlags run Chromium headless with nothing that reaches the network by itself, and no
// host name resolving: a report that tried to fetch anything would fail to.
func chromiumFlags(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + profile}
}

type chartCheck struct {
	Chart               string
	Width, Height       float64
	Rects, Paths, Texts int
}

// TestReportRendersInChromium opens the fixture run's report in headless Chromium: it loads
// with the network unreachable, fetches nothing, logs no error, and every chart draws (a box of
// its size, its lines and labels).
func TestReportRendersInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("IOTBENCH_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is not installed and IOTBENCH_REQUIRE_CHROMIUM is set: run scripts/ensure-chromium.sh")
		}
		t.Skip("chromium is not installed (scripts/ensure-chromium.sh installs it; make test runs it)")
	}
	var page bytes.Buffer
	o := fixtureOverview(t)
	o.Scenarios[0].Profiles = []profile.Record{fixtureProfile(t)}
	if err := WriteHTML(&page, o, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	report := filepath.Join(dir, "report.html")
	if err := os.WriteFile(report, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	checked := filepath.Join(dir, "checked.html")
	withChecker := strings.Replace(page.String(), "<head>", "<head>\n"+checker, 1)
	if err := os.WriteFile(checked, []byte(withChecker), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(chromiumFlags(filepath.Join(dir, "profile")), "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=5000", "--dump-dom", "file://"+checked)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`(?s)<pre id="iotbench-check">(.*?)</pre>`).FindSubmatch(stdout.Bytes())
	if m == nil {
		t.Fatalf("the page did not finish loading (no check result in its DOM); chromium said:\n%s", stderr.String())
	}
	var res struct {
		Charts  []chartCheck
		Flames  []chartCheck
		Errors  []string
		Fetched []string
	}
	if err := json.Unmarshal(unescapeHTML(m[1]), &res); err != nil {
		t.Fatalf("check result %s: %v", m[1], err)
	}
	if len(res.Errors) > 0 {
		t.Errorf("errors while loading: %v", res.Errors)
	}
	if len(res.Fetched) > 0 {
		t.Errorf("the report fetched %v: it must open without network", res.Fetched)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Failed to load") {
			t.Errorf("chromium logged: %s", line)
		}
	}
	if len(res.Charts) != 4 {
		t.Errorf("%d charts drawn, want 4: %+v", len(res.Charts), res.Charts)
	}
	for _, c := range res.Charts {
		// A drawn chart has a size, its axes, lines and labels; an empty SVG has none.
		if c.Width < 300 || c.Height < 150 || c.Paths < 10 || c.Texts < 5 {
			t.Errorf("chart %q did not draw: %+v", c.Chart, c)
		}
	}

	// A drawn flame graph: a box a frame of the profile, labelled where they fit.
	if len(res.Flames) != 1 || res.Flames[0].Width < 300 || res.Flames[0].Height < 100 || res.Flames[0].Rects < 20 || res.Flames[0].Texts < 10 {
		t.Errorf("flame graphs drawn: %+v, want one of a size with its boxes and labels", res.Flames)
	}

	if *screenshot != "" {
		shot := exec.CommandContext(ctx, bin, append(chromiumFlags(filepath.Join(dir, "profile2")),
			"--hide-scrollbars", "--window-size=1200,2600", "--screenshot="+*screenshot, "file://"+report)...)
		if out, err := shot.CombinedOutput(); err != nil {
			t.Fatalf("screenshot: %v\n%s", err, out)
		}
	}
}

// unescapeHTML undoes what --dump-dom escapes in a text node.
func unescapeHTML(b []byte) []byte {
	r := strings.NewReplacer("&quot;", `"`, "&lt;", "<", "&gt;", ">", "&#39;", "'", "&amp;", "&")
	return []byte(r.Replace(string(b)))
}

// fixtureProfile is a profile of the flame package's perf script sample, as a run keeps it.
func fixtureProfile(t *testing.T) profile.Record {
	t.Helper()
	f, err := os.Open("../flame/testdata/perf-script.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stacks, err := flame.ParsePerfScript(f)
	if err != nil {
		t.Fatal(err)
	}
	return profile.Record{Scenario: "io-heavy", Target: "fastify", Search: 1, Rate: 4000, Achieved: 3998, P50: 3 * time.Millisecond,
		P99: 40 * time.Millisecond, Duration: 4 * time.Second, Cost: profile.Cost{Wall: 4 * time.Second, CPU: 300 * time.Millisecond},
		Processes: 1, Named: 1, Stacks: stacks}
}
