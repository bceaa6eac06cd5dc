package evalreport_test

// The HTML report in a real browser: headless Chromium opens the page from
// disk, runs its script, and the DOM it dumps is what a reader would see.

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/evalreport"
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
// would run if the page ever wrote it as HTML. B refused the sum (and
// failed it), C's answer to the capital was cut (and passed).
func browserEval() *evalreport.Eval {
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
	e := &evalreport.Eval{RunID: "r-browser", Dataset: "browser.jsonl",
		Pairs: []evalreport.Pair{{A: a, B: b, AOnly: 3}, {A: a, B: c, AOnly: 1}, {A: b, B: c, BOnly: 2}}}
	var results []evalreport.Result
	for m, model := range []string{a, b, c} {
		stats := evalreport.ModelStats{Model: model}
		for i, it := range items {
			r := evalreport.Result{Model: model, Item: it.id, Line: i + 1, Prompt: it.prompt, Expected: []string{"the answer"},
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
			switch {
			case model == b && it.id == "sum":
				r.Finish = evalreport.FinishRefusal
				stats.Refused++
			case model == c && it.id == "capital":
				r.Finish = evalreport.FinishLength
				stats.Cut++
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
	if err := evalreport.WriteHTML(&page, browserEval()); err != nil {
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
		{"refused or cut", "filter=finish", []string{"capital", "sum"}},
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
			if view.fragment == "" && !bytes.Contains(dom, []byte(`<span class="badge fail">fail</span> <span class="badge finish">refused</span> 0.00 · 201 ms`)) {
				t.Errorf("the grid does not badge B's refusal:\n%s", dom)
			}
		})
	}
	sameCells(t, page.Bytes(), headless(t, browser, path, "", "--dump-dom"), 7)
}

// sameCells fails when the script draws the models' cells other than the
// page's HTML writes them for readers without it.
func sameCells(t *testing.T, page, dom []byte, n int) {
	t.Helper()
	static := regexp.MustCompile(`<tr class="item static">.*?</td>(<td class="r .*?)</tr>`).FindAllSubmatch(page, -1)
	drawn := regexp.MustCompile(`<tr class="item" data-n="\d+">.*?</td>(<td class="r .*?)</tr>`).FindAllSubmatch(dom, -1)
	if len(static) != n || len(drawn) != n {
		t.Fatalf("%d static rows, %d drawn, want %d", len(static), len(drawn), n)
	}
	for i := range static {
		// The serializer writes ' and " bare where html/template escapes them.
		s := strings.NewReplacer("&#39;", "'", "&#34;", `"`).Replace(string(static[i][1]))
		if s != string(drawn[i][1]) {
			t.Errorf("row %d is drawn\n%s\nand written\n%s", i, drawn[i][1], s)
		}
	}
}

// browserRepeatedEval is two models, A and B, asking six items three
// times each. Each item's repeats, P passed, F failed, E errored, and the
// verdicts worked by hand: more than half of the repeats must pass.
//
//	item        A    verdict     B    verdict     models    repeats
//	steady      PPP  pass        PPP  pass        agree     agree
//	majority    PPF  pass 2/3    PFF  fail 1/3    differ    disagree
//	wrong       FFF  fail        FFF  fail        agree     agree
//	outage      EEE  error       PEP  pass 2/3    differ    disagree
//	mixed       PFP  pass 2/3    EPP  pass 2/3    agree     disagree
//	hostile     FFP  fail 1/3    FFF  fail        agree     disagree
//
// Repeat by repeat the models differ on mixed too (A#1 F, B#1 P), which
// a grid of repeats would show and the pair's McNemar does not count: A
// passed majority alone and B outage alone, so the pair differs on 2.
// A's first answer to hostile was a refusal, B's last to wrong was cut.
func browserRepeatedEval() *evalreport.Eval {
	const a, b = "model-a", "model-b"
	items := []struct {
		id, prompt string
		repeats    [2]string
	}{
		{"steady", "What is the capital of France?", [2]string{"PPP", "PPP"}},
		{"majority", "What is 6 × 7?", [2]string{"PPF", "PFF"}},
		{"wrong", "What is 2 + 2 in base 3?", [2]string{"FFF", "FFF"}},
		{"outage", "Anything.", [2]string{"EEE", "PEP"}},
		{"mixed", "Name a prime between 10 and 20.", [2]string{"PFP", "EPP"}},
		{"hostile", `Reply with <img src=x onerror="document.title='pwned'"> as is.`, [2]string{"FFP", "FFF"}},
	}
	e := &evalreport.Eval{RunID: "r-repeats", Dataset: "repeats.jsonl", Repeat: 3,
		Pairs: []evalreport.Pair{{A: a, B: b, AOnly: 1, BOnly: 1, Both: 2, None: 2, P: 1}}}
	var results []evalreport.Result
	for m, model := range []string{a, b} {
		e.Models = append(e.Models, evalreport.ModelStats{Model: model, Items: 3 * len(items)})
		for i, it := range items {
			for k, verdict := range it.repeats[m] {
				r := evalreport.Result{Model: model, Item: it.id, Line: i + 1, Repeat: k, Repeated: true, Prompt: it.prompt,
					Expected: []string{"the answer"}, LatencyMS: float64(100 * (k + 1)), CostUSD: 0.0001,
					Answer: fmt.Sprintf("<script>document.title='pwned'</script> answer %d of %s", k, model)}
				switch verdict {
				case 'P':
					r.Pass, r.Score = true, 1
				case 'F':
					r.Reasons = []string{"exact: got <b>something else</b>"}
				case 'E':
					r.Error, r.Answer, r.LatencyMS, r.CostUSD = "503 Service Unavailable", "", 0, 0
				}
				if it.id == "hostile" && k == 2 {
					r.Answer += " (the only pass: zanzibar)"
				}
				switch {
				case model == a && it.id == "hostile" && k == 0:
					r.Finish = evalreport.FinishRefusal
				case model == b && it.id == "wrong" && k == 2:
					r.Finish = evalreport.FinishLength
				}
				results = append(results, r)
			}
		}
	}
	e.Results = slices.Values(results)
	return e
}

// TestEvalHTMLRepeatsInChromium: with repeats, the grid has a row per
// item, and its filters read the items' verdicts as the pairs count them.
func TestEvalHTMLRepeatsInChromium(t *testing.T) {
	browser := chromium(t)
	var page bytes.Buffer
	if err := evalreport.WriteHTML(&page, browserRepeatedEval()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	links := pairLink.FindAllSubmatch(page.Bytes(), -1)
	if len(links) != 1 || !bytes.Contains(links[0][0], []byte("the 2 items where they differ")) {
		t.Fatalf("links from the pairs to their items: %q, want one to 2 items", links)
	}
	ab, err := url.PathUnescape(strings.ReplaceAll(string(links[0][1]), "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}

	for _, view := range []struct {
		name, fragment string
		want           []string
	}{
		{"every item, once", "", []string{"steady", "majority", "wrong", "outage", "mixed", "hostile"}},
		{"models' verdicts differ", "filter=disagree", []string{"majority", "outage"}},
		{"the pair's link, as many as it says", ab, []string{"majority", "outage"}},
		{"repeats disagree", "filter=repeats", []string{"majority", "outage", "mixed", "hostile"}},
		{"failures in any model", "filter=failed", []string{"majority", "wrong", "outage", "hostile"}},
		{"an errored repeat", "filter=errors", []string{"outage", "mixed"}},
		{"a refused or cut repeat", "filter=finish", []string{"wrong", "hostile"}},
		{"search in one repeat's answer", "q=ZANZIBAR", []string{"hostile"}},
		{"sorted by A's verdict", "sort=m0.result", []string{"steady", "majority", "mixed", "wrong", "hostile", "outage"}},
		{"sorted by B's mean score, highest first", "sort=m1.score&desc=1", []string{"steady", "outage", "mixed", "majority", "wrong", "hostile"}},
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
			if view.fragment != "" {
				return
			}
			for _, cell := range []string{
				// majority: A passed 2 of 3, B 1; mean latency of the answered, summed cost.
				`<td class="r pass"><div class="head"><span class="badge pass">pass</span> 2/3 passed · 0.67 · 200 ms · $0.00030</div><details><summary>3 repeats</summary><ol class="repeats"><li class="pass">`,
				`<td class="r fail"><div class="head"><span class="badge fail">fail</span> 1/3 passed · 0.33 · 200 ms · $0.00030</div>`,
				// outage: A never answered; B did twice, the second repeat errored.
				`<td class="r error"><div class="head"><span class="badge error">error</span> 0/3 passed</div>`,
				// hostile: A's refusal, counted in its cell and badged in its list.
				`<td class="r fail"><div class="head"><span class="badge fail">fail</span> <span class="badge finish">1/3 refused</span> 1/3 passed · 0.33 · 200 ms · $0.00030</div>`,
				`<li class="fail"><div class="head"><span class="badge fail">fail</span> <span class="badge finish">refused</span> #0 · 0.00 · 100 ms · $0.00010</div><div class="text">&lt;script&gt;`,
				`<li class="error"><div class="head"><span class="badge error">error</span> #1</div><div class="text err">503 Service Unavailable</div></li>`,
				`<li class="fail"><div class="head"><span class="badge fail">fail</span> #1 · 0.00 · 200 ms · $0.00010</div><div class="text">&lt;script&gt;document.title='pwned'&lt;/script&gt; answer 1 of model-b</div><div class="why">exact: got &lt;b&gt;something else&lt;/b&gt;</div></li>`,
			} {
				if !bytes.Contains(dom, []byte(cell)) {
					t.Errorf("the grid has no %s", cell)
				}
			}
		})
	}
	// The script draws the cells the page's HTML has for readers without it.
	sameCells(t, page.Bytes(), headless(t, browser, path, "", "--dump-dom"), 6)
}
