package report_test

// The HTML report in a real browser: headless Chromium opens the page from
// disk, runs its script, and the DOM it dumps is what a reader would see.

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/report"
)

// chromium is the path of a Chromium-based browser. Without one the test
// is skipped, unless DIGEST_REQUIRE_CHROMIUM=1 (CI), where it fails.
func chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("DIGEST_REQUIRE_CHROMIUM") == "1" {
		tb.Fatal("DIGEST_REQUIRE_CHROMIUM=1 but no chromium, chromium-browser or google-chrome on PATH. Try: apt-get install -y chromium")
	}
	tb.Skip("no chromium, chromium-browser or google-chrome on PATH (DIGEST_REQUIRE_CHROMIUM=1 makes this a failure)")
	return ""
}

// headless runs the browser on page#fragment with the given output flag
// (--dump-dom, --screenshot=FILE) and returns what it wrote to stdout.
func headless(tb testing.TB, browser, page, fragment, output string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u := (&url.URL{Scheme: "file", Path: page}).String()
	if fragment != "" {
		u += "#" + fragment
	}
	// --no-sandbox: CI runs as root, where Chromium's sandbox will not start;
	// the page is our own. --virtual-time-budget lets the script finish
	// before the DOM is taken.
	cmd := exec.CommandContext(ctx, browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--user-data-dir="+filepath.Join(tb.TempDir(), "profile"), "--window-size=1280,900",
		"--virtual-time-budget=5000", output, u)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s: %v\n%s", browser, err, stderr.Bytes())
	}
	return out
}

// browserEval is three models, A, B and C, on seven items: some they agree
// on, some they do not, one only A was asked, and hostile text that
// would run if the page ever wrote it as HTML.
func browserEval() *report.Eval {
	const a, b, c = "model-a", "model-b", "model-c"
	const (
		pass = iota
		fail
		failedCall
		notAsked
	)
	items := []struct {
		id, prompt string
		states     [3]int
	}{
		{"capital", "What is the capital of France?", [3]int{pass, pass, pass}},
		{"sum", "What is 2 + 2 in base 3?", [3]int{fail, fail, fail}},
		{"math", "What is 6 × 7?", [3]int{pass, fail, pass}},
		{"html", `Reply with <img src=x onerror="document.title='pwned'"> as is.`, [3]int{fail, pass, pass}},
		{"down", "Anything.", [3]int{failedCall, failedCall, failedCall}},
		{"only-a", "Asked of A alone.", [3]int{pass, notAsked, notAsked}},
		{"flaky", "What is the boiling point of water at sea level?", [3]int{pass, failedCall, pass}},
	}
	e := &report.Eval{RunID: "r-browser", Dataset: "browser.jsonl",
		Pairs: []report.Pair{{A: a, B: b, AOnly: 3}, {A: a, B: c, AOnly: 1}, {A: b, B: c, BOnly: 2}}}
	var results []report.Result
	for m, model := range []string{a, b, c} {
		stats := report.ModelStats{Model: model}
		for i, it := range items {
			r := report.Result{Model: model, Item: it.id, Line: i + 1, Prompt: it.prompt, Expected: []string{"the answer"},
				Answer: "<script>document.title='pwned'</script> answer of " + model, LatencyMS: float64(100*(i+1) + m), CostUSD: 0.0001}
			switch it.states[m] {
			case notAsked:
				continue
			case pass:
				r.Pass, r.Score = true, 1
				stats.Passed++
			case fail:
				r.Reasons = []string{"exact: got <b>something else</b>"}
			case failedCall:
				r.Error, r.Answer = "503 Service Unavailable", ""
				stats.Errors++
			}
			stats.Items++
			results = append(results, r)
		}
		stats.Accuracy = float64(stats.Passed) / float64(stats.Items)
		e.Models = append(e.Models, stats)
	}
	e.Results = slices.Values(results)
	return e
}

var (
	jsRow    = regexp.MustCompile(`<tr class="item" data-n="\d+"><td class="id"><div class="text">([^<]*)</div>`)
	pairLink = regexp.MustCompile(`<a href="#([^"]*)">the \d+ items? where they differ</a>`)
)

// rows are the item ids of the grid's rows, in order, as the script drew them.
func rows(dom []byte) []string {
	var ids []string
	for _, m := range jsRow.FindAllSubmatch(dom, -1) {
		ids = append(ids, strings.TrimSuffix(string(m[1]), "#0"))
	}
	return ids
}

func TestEvalHTMLInChromium(t *testing.T) {
	browser := chromium(t)
	var page bytes.Buffer
	if err := report.WriteHTML(&page, browserEval()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	links := pairLink.FindAllSubmatch(page.Bytes(), -1)
	if len(links) != 3 {
		t.Fatalf("%d links from the pairs to their items, want 3", len(links))
	}
	bc, err := url.PathUnescape(strings.ReplaceAll(string(links[2][1]), "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}

	all := []string{"capital", "sum", "math", "html", "down", "only-a", "flaky"}
	for _, view := range []struct {
		name, fragment string
		want           []string
	}{
		{"every item", "", all},
		{"models disagree", "filter=disagree", []string{"math", "html", "flaky"}},
		{"the pair's link", bc, []string{"math", "flaky"}}, // B and C
		{"failures in any model", "filter=failed", []string{"sum", "math", "html", "down", "flaky"}},
		{"errors", "filter=errors", []string{"down", "flaky"}},
		{"search", "q=BOILING", []string{"flaky"}},
		{"a sort that is not a column", "filter=disagree&sort=%27%5D%5Bx&desc=1", []string{"math", "html", "flaky"}},
		{"sorted by C's latency, slowest first", "sort=m2.latency&desc=1", []string{"flaky", "html", "math", "sum", "capital", "down", "only-a"}},
	} {
		t.Run(view.name, func(t *testing.T) {
			dom := headless(t, browser, path, view.fragment, "--dump-dom")
			if got := rows(dom); !slices.Equal(got, view.want) {
				t.Errorf("#%s shows %q, want %q", view.fragment, got, view.want)
			}
			if bytes.Contains(dom, []byte(`class="item static"`)) {
				t.Error("the rows written for readers without JavaScript are still there")
			}
			if bytes.Contains(dom, []byte("<img")) || bytes.Contains(dom, []byte("<b>something")) || bytes.Count(dom, []byte("<script")) != 2 || bytes.Contains(dom, []byte("<title>pwned")) {
				t.Errorf("text from the run became markup:\n%s", dom)
			}
			// Four sort buttons per model, each telling whether it is the sort.
			if n := bytes.Count(dom, []byte(`aria-pressed="`)); n != 12 {
				t.Errorf("%d sort buttons say whether they are pressed, want 12", n)
			}
			if strings.HasPrefix(view.fragment, "sort=m2.latency") && !bytes.Contains(dom, []byte(`<button type="button" data-sort="m2.latency" aria-pressed="true">latency</button>`)) {
				t.Error("the grid does not show which column it is sorted by")
			}
			if view.fragment == "" && !bytes.Contains(dom, []byte(`<td class="prompt"><div class="text">What is the capital of France?</div>`)) {
				t.Errorf("the grid does not show the question:\n%s", dom)
			}
		})
	}
}
