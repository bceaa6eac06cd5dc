package cmd

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
)

// A fake provider whose models know different sums: "strong" answers every
// question right, "weak" only those with an even first operand.
func arithmeticServer(t *testing.T) *fakeprovider.Server {
	return fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(r fakeprovider.Received) string {
		q := r.Messages[len(r.Messages)-1].Content
		var a, b int
		if _, err := fmt.Sscanf(q, "What is %d + %d?", &a, &b); err != nil {
			return "I cannot tell."
		}
		if r.Model == "weak" && a%2 == 1 {
			return "The answer is 0."
		}
		return "The answer is " + strconv.Itoa(a+b) + "."
	}})
}

func writeDataset(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sums.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sums is ten native items "What is A + B?" with numeric expectations; A is
// odd in four of them.
func sums(t *testing.T) string {
	var lines []string
	for i, a := range []int{2, 3, 4, 5, 6, 8, 10, 11, 12, 13} {
		lines = append(lines, `{"id": "q`+strconv.Itoa(i)+`", "prompt": "What is `+strconv.Itoa(a)+` + `+strconv.Itoa(i)+`?", "expected": "`+strconv.Itoa(a+i)+`", "assert": [{"type": "numeric"}]}`)
	}
	return writeDataset(t, lines...)
}

type evalJSON struct {
	RunID  string `json:"run_id"`
	Models []struct {
		Model    string  `json:"model"`
		Items    int     `json:"items"`
		Passed   int     `json:"passed"`
		Accuracy float64 `json:"accuracy"`
		CILow    float64 `json:"ci_low"`
		CIHigh   float64 `json:"ci_high"`
		Errors   int     `json:"errors"`
		Cached   int     `json:"cached"`
		Latency  struct {
			P50 float64 `json:"p50"`
		} `json:"latency_ms"`
		InputTokens int     `json:"input_tokens"`
		CostUSD     float64 `json:"cost_usd"`
	} `json:"models"`
	Pairs []struct {
		AOnly int     `json:"a_only"`
		BOnly int     `json:"b_only"`
		P     float64 `json:"p_value"`
	} `json:"pairs"`
}

// TestEvalScoresComparesAndRerunsForFree: two models over the OpenAI wire
// format are scored and compared in the JSON report, JUnit and HTML; a
// rerun is served from the database and runs list marks it as a rerun of
// the first, in every format; runs show reads a run back.
func TestEvalScoresComparesAndRerunsForFree(t *testing.T) {
	srv := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	data := sums(t)
	dir := t.TempDir()
	junit, html := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.html")
	args := []string{"eval", data, "--models", "openai:strong,openai:weak", "--base-url", srv.OpenAIBaseURL(),
		"-f", "json", "--junit", junit, "--html", html}
	res := h.run(context.Background(), args...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var rep evalJSON
	if err := json.Unmarshal([]byte(res.out), &rep); err != nil {
		t.Fatalf("%v: %s", err, res.out)
	}
	strong, weak := rep.Models[0], rep.Models[1]
	if strong.Model != "openai:strong" || strong.Items != 10 || strong.Passed != 10 || weak.Passed != 6 || weak.Errors != 0 {
		t.Fatalf("models %+v", rep.Models)
	}
	// The interval and the pair's test, worked out by hand, are eval's
	// TestRerunReportsTheOriginalFigures; here, that they are reported.
	if weak.CILow <= 0 || weak.CIHigh >= 1 || len(rep.Pairs) != 1 || rep.Pairs[0].AOnly != 4 || rep.Pairs[0].P <= 0 {
		t.Errorf("weak interval [%.4f, %.4f], pairs %+v", weak.CILow, weak.CIHigh, rep.Pairs)
	}
	if srv.Stats().Requests != 20 {
		t.Errorf("%d requests, want 20", srv.Stats().Requests)
	}
	var suites struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	b, err := os.ReadFile(junit)
	if err != nil || xml.Unmarshal(b, &suites) != nil || len(suites.Suites) != 2 || suites.Suites[1].Failures != 4 || suites.Suites[1].Tests != 10 {
		t.Errorf("junit: %+v, %v", suites, err)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "openai:weak") {
		t.Errorf("html report: %v", err)
	}

	before := srv.Stats().Requests
	again := h.run(context.Background(), args...)
	var rep2 evalJSON
	json.Unmarshal([]byte(again.out), &rep2)
	if again.code != 0 || srv.Stats().Requests != before {
		t.Fatalf("rerun: exit %d, %d new requests, want none", again.code, srv.Stats().Requests-before)
	}
	if rep2.RunID == rep.RunID || rep2.Models[1].Passed != 6 || rep2.Models[1].Cached != 10 || rep2.Models[0].Latency.P50 != strong.Latency.P50 || rep2.Models[0].InputTokens != strong.InputTokens {
		t.Errorf("rerun report %+v: want the same scores, all cached, original latency and tokens", rep2.Models)
	}

	list := h.run(context.Background(), "runs", "list", "--format", "json")
	var listed []struct {
		ID       string             `json:"id"`
		Accuracy map[string]float64 `json:"accuracy"`
		RerunOf  string             `json:"rerun_of"`
	}
	if list.code != 0 || json.Unmarshal([]byte(list.out), &listed) != nil || len(listed) != 2 {
		t.Fatalf("runs list: %d %s", list.code, list.out)
	}
	// The cached rerun is marked as one; the first run is the original.
	if listed[0].ID != rep2.RunID || listed[0].RerunOf != rep.RunID || listed[1].RerunOf != "" ||
		listed[1].Accuracy["openai:strong"] != 1 || listed[1].Accuracy["openai:weak"] != 0.6 {
		t.Errorf("runs list %+v: want the rerun marked as one of %s, accuracies 1 and 0.6", listed, rep.RunID)
	}
	if res := h.run(context.Background(), "runs", "list"); !strings.Contains(res.out, "openai:strong 100.0%, openai:weak 60.0%") || !strings.Contains(res.out, "RERUN OF") {
		t.Errorf("runs list table: %s", res.out)
	}
	// A run from the cache that asked less (--limit) is no rerun of it.
	if res := h.run(context.Background(), append(args, "--limit", "5")...); res.code != 0 {
		t.Fatalf("limited rerun: exit %d %s", res.code, res.errOut)
	}
	list = h.run(context.Background(), "runs", "list", "--format", "json")
	listed = nil // decoding into the old elements would keep their rerun_of
	if json.Unmarshal([]byte(list.out), &listed) != nil || len(listed) != 3 || listed[0].RerunOf != "" || listed[1].RerunOf != rep.RunID {
		t.Errorf("a cached run of 5 of the 10 items is listed as a rerun: %+v", listed)
	}
	for format, want := range map[string]string{"jsonl": `"id":"` + rep.RunID, "csv": rep.RunID + ",", "markdown": "| `" + rep.RunID + "` |", "table": rep.RunID} {
		if res := h.run(context.Background(), "runs", "list", "-f", format); res.code != 0 || !strings.Contains(res.out, want) {
			t.Errorf("runs list -f %s: exit %d: %s", format, res.code, res.out)
		}
	}
	if res := h.run(context.Background(), "runs", "list", "-f", "yaml"); res.code != 2 {
		t.Errorf("runs list -f yaml: exit %d, want 2", res.code)
	}
	show := h.run(context.Background(), "runs", "show", rep.RunID, "-f", "json")
	var shown evalJSON
	if show.code != 0 || json.Unmarshal([]byte(show.out), &shown) != nil || shown.Models[1].Passed != 6 || shown.Models[1].Cached != 0 {
		t.Errorf("runs show: %d %s", show.code, show.out)
	}
}

func TestEvalGateFailsWithExit3AfterWritingReports(t *testing.T) {
	srv := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	summary := filepath.Join(t.TempDir(), "summary.md")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	junit := filepath.Join(t.TempDir(), "junit.xml")
	res := h.run(context.Background(), "eval", sums(t), "--models", "openai:strong,openai:weak", "--base-url", srv.OpenAIBaseURL(),
		"--min-accuracy", "0.8", "--junit", junit, "-f", "markdown")
	if res.code != 3 || !strings.Contains(res.errOut, "below --min-accuracy: openai:weak 60.0% < 80.0%") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	for _, path := range []string{junit, summary} {
		if info, err := os.Stat(path); err != nil || info.Size() == 0 {
			t.Errorf("%s not written before the gate failed: %v", path, err)
		}
	}
	if res := h.run(context.Background(), "eval", sums(t), "--models", "openai:strong,openai:weak", "--base-url", srv.OpenAIBaseURL(),
		"--min-accuracy", "openai:strong=0.9", "-f", "json"); res.code != 0 {
		t.Errorf("a gate on the strong model alone: exit %d: %s", res.code, res.errOut)
	}
}

// TestEvalOfflineDryRunAndBadInput: the offline model needs nothing; a dry
// run creates no database; a bad line exits non-zero naming it, and
// --skip-invalid says what it skipped; bad flags exit 2. What a bad line
// leaves in the store is eval's TestBadLineStopsTheRun.
func TestEvalOfflineDryRunAndBadInput(t *testing.T) {
	h := newHarness(t)
	data := sums(t)
	if res := h.run(context.Background(), "eval", data, "-f", "json"); res.code != 0 || !strings.Contains(res.out, `"model": "offline"`) {
		t.Errorf("offline eval: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	dry := newHarness(t)
	res := dry.run(context.Background(), "eval", data, "--models", "openai:gpt-4o-mini", "--dry-run", "-f", "json")
	if res.code != 0 || !strings.Contains(res.out, `"requests":10`) {
		t.Errorf("dry run: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	if _, err := os.Stat(dry.db); !os.IsNotExist(err) {
		t.Error("a dry run created the database")
	}
	bad := writeDataset(t, `{"prompt": "ok", "expected": "1"}`, `{"prompt": 7}`, `not json`)
	res = h.run(context.Background(), "eval", bad)
	if res.code == 0 || !strings.Contains(res.errOut, bad+":2:") {
		t.Errorf("bad line: exit %d: %q", res.code, res.errOut)
	}
	res = h.run(context.Background(), "eval", bad, "--skip-invalid", "-f", "json")
	if res.code != 0 || strings.Count(res.errOut, "skipped") != 2 {
		t.Errorf("--skip-invalid: exit %d: %q", res.code, res.errOut)
	}
	for _, args := range [][]string{
		{"eval", data, "--repeat", "0"},
		{"eval", data, "--models", "gpt4"},
		{"eval", data, "--min-accuracy", "1.5"},
		{"eval", data, "--min-accuracy", "openai:x=0.5"},
		{"eval", data, "-f", "yaml"},
		{"eval", filepath.Join(t.TempDir(), "missing.jsonl")},
	} {
		if res := h.run(context.Background(), args...); res.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, res.code, res.errOut)
		}
	}
	// A gate for a model the run does not have names the ones it has.
	res = h.run(context.Background(), "eval", data, "--models", "offline", "--min-accuracy", "openai:x=0.5")
	oneLineError(t, res, 2, `--min-accuracy names "openai:x", which is not among --models`, "Try: one of offline, as --min-accuracy offline=0.5")
}

// oracle answers the example datasets correctly, and grades as a judge.
func oracleServer(t *testing.T) *fakeprovider.Server {
	answers := []struct{ has, say string }{
		{"Rubric:", "PASS\nIt meets the rubric."},
		{"capital of France", "Paris"}, {"capital of Japan", "Tokyo"}, {"necessary", "NECESSARY"},
		{"Red Planet", "B"}, {"formula of water", "(B)"}, {"is prime", "The answer is C."},
		{"JSON object with keys", "```json\n{\"name\": \"Ada\", \"age\": 30}\n```"}, {"first three primes", "[2,3,5]"},
		{"Bonjour", "Hello everyone"}, {"Muchas gracias", "Thank you very much"}, {"Guten Morgen", "Good morning"}, {"Buona notte", "Good night"},
	}
	return fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(r fakeprovider.Received) string {
		q := r.Messages[len(r.Messages)-1].Content
		for _, a := range answers {
			if strings.Contains(q, a.has) {
				return a.say
			}
		}
		return "I do not know."
	}})
}

// TestEvalEveryFormat runs the example datasets (openai/evals, inspect
// multiple choice, digest's own with JSON assertions, promptfoo with a
// template and a judged rubric) through the OpenAI wire format.
func TestEvalEveryFormat(t *testing.T) {
	srv := oracleServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	h.env["OPENAI_BASE_URL"] = srv.OpenAIBaseURL() // the judge's server: --base-url is for --models only
	for _, tt := range []struct {
		args  []string
		items int
	}{
		{[]string{"../testdata/eval/mixed.jsonl"}, 8},
		{[]string{"../testdata/eval/promptfoo.jsonl", "--prompt", "../testdata/eval/prompt.txt", "--judge", "openai:grader"}, 4},
	} {
		args := append([]string{"eval"}, tt.args...)
		args = append(args, "--models", "openai:oracle", "-f", "jsonl")
		res := h.run(context.Background(), args...)
		if res.code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, res.code, res.errOut)
		}
		lines := strings.Split(strings.TrimSpace(res.out), "\n")
		if len(lines) != tt.items {
			t.Errorf("%v: %d results, want %d", tt.args, len(lines), tt.items)
		}
		for _, l := range lines {
			var r struct {
				Item    string   `json:"item"`
				Pass    bool     `json:"pass"`
				Reasons []string `json:"reasons"`
				Error   string   `json:"error"`
			}
			json.Unmarshal([]byte(l), &r)
			if !r.Pass {
				t.Errorf("%v: item %s failed: %v %s", tt.args, r.Item, r.Reasons, r.Error)
			}
		}
	}
	var judged bool
	for _, r := range srv.Requests() {
		judged = judged || r.Model == "grader"
	}
	if !judged {
		t.Error("the llm-rubric assertion never reached the judge model")
	}
	// The judge's verdicts are stored too: a rerun asks nobody anything.
	before := srv.Stats().Requests
	res := h.run(context.Background(), "eval", "../testdata/eval/promptfoo.jsonl", "--prompt", "../testdata/eval/prompt.txt",
		"--judge", "openai:grader", "--models", "openai:oracle", "-f", "json")
	if res.code != 0 || srv.Stats().Requests != before {
		t.Errorf("rerun with a judge: exit %d, %d new requests", res.code, srv.Stats().Requests-before)
	}
}

// A fatal error on one model stops the run with that error, not as an
// interrupt.
func TestEvalFatalErrorWithTwoModels(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "right"})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "wrong"
	res := h.run(context.Background(), "eval", sums(t), "--models", "openai:a,offline", "--base-url", srv.OpenAIBaseURL())
	if res.code != 1 || !strings.Contains(res.errOut, "HTTP 401") || strings.Contains(res.errOut, "interrupted") {
		t.Errorf("exit %d: %s", res.code, res.errOut)
	}
}

// TestEvalFailuresExit1AndStdinIsRead: a run whose requests all failed
// writes every report, then exits 1 naming the first failure, not green;
// and a dataset can come on standard input, named "-". What failures,
// repeats and system prompts do to the cache is eval's
// TestWhatIsSentDecidesWhatIsPaid.
func TestEvalFailuresExit1AndStdinIsRead(t *testing.T) {
	ok := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	data := sums(t)
	h.wrap = func(provider.Provider) provider.Provider {
		return provider.Func(func(context.Context, provider.Request) (provider.Response, error) {
			return provider.Response{}, &provider.Error{Provider: "openai", Kind: provider.Permanent, StatusCode: 400, Message: "bad request"}
		})
	}
	res := h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", ok.OpenAIBaseURL(), "--limit", "2", "-f", "json")
	if res.code != 1 || !strings.Contains(res.out, `"errors": 2`) || !strings.Contains(res.errOut, "2 results ended in error (openai:strong 2); the first, openai:strong on q0: openai: HTTP 400: bad request. Try: ") {
		t.Fatalf("every call failing: exit %d, %s %s", res.code, res.out, res.errOut)
	}
	h.wrap = nil

	stdin, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	h.stdin = stdin
	if res := h.run(context.Background(), "eval", "-", "--models", "openai:strong", "--base-url", ok.OpenAIBaseURL(), "--limit", "2", "-f", "json"); res.code != 0 || !strings.Contains(res.out, `"dataset": "-"`) || !strings.Contains(res.out, `"passed": 2`) || ok.Stats().Requests != 2 {
		t.Errorf("stdin: exit %d, %d requests: %s %s", res.code, ok.Stats().Requests, res.out, res.errOut)
	}
}

func TestEvalMaxCost(t *testing.T) {
	srv := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	cfg := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(cfg, []byte(`{"openai:strong": {"price": {"input_per_million": 10000, "output_per_million": 10000}}}`), 0o600)
	// At a cent a token, each request may cost about (8 input + 10 output
	// tokens) × $0.01 = $0.18 and costs the fake's (4 + 4) × $0.01 = $0.08:
	// $0.5 buys about five, not ten.
	res := h.run(context.Background(), "eval", sums(t), "--models", "openai:strong", "--base-url", srv.OpenAIBaseURL(),
		"--model-config", cfg, "--max-cost", "0.5", "--max-tokens", "10", "-j", "1", "-f", "json")
	if res.code != 1 || !strings.Contains(res.errOut, "stopped before --max-cost $0.5") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var rep evalJSON
	json.Unmarshal([]byte(res.out), &rep)
	if n := srv.Stats().Requests; n < 3 || n > 8 || rep.Models[0].Items != n || rep.Models[0].CostUSD > 0.5 {
		t.Errorf("%d requests sent, %d results reported, $%.2f spent under a $0.5 budget", n, rep.Models[0].Items, rep.Models[0].CostUSD)
	}
}

// TestEvalPrintsTheJudgesCost: the verdicts' cost, in no model's row, has
// a line of its own, on standard error, in runs show of the run read later
// without the judge's flags, and in every report format. That verdicts are
// asked for concurrently and kept is eval's TestJudgesSeveralAnswersAtOnce.
func TestEvalPrintsTheJudgesCost(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(r fakeprovider.Received) string {
		if r.Model != "grader" {
			return "Good morning"
		}
		return "PASS\nA greeting."
	}})
	var data strings.Builder
	for i := range 16 {
		fmt.Fprintf(&data, `{"prompt": "Say good morning, %d", "assert": [{"type": "llm-rubric", "value": "Is a greeting"}]}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "judged.jsonl")
	if err := os.WriteFile(path, []byte(data.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	h.env["OPENAI_BASE_URL"] = srv.OpenAIBaseURL()
	res := h.run(context.Background(), "eval", path, "--models", "openai:m", "--judge", "openai:grader", "-j", "4", "-f", "jsonl")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	if n := strings.Count(res.out, `"pass":true`); n != 16 {
		t.Errorf("%d passing rows, want 16:\n%s", n, res.out)
	}
	// The verdicts' cost, in no model's row, has a line of its own.
	if !strings.Contains(res.errOut, "\ndigest: judge openai:grader: 16 verdicts paid for, cost unknown") {
		t.Errorf("no line for the judge's cost: %s", res.errOut)
	}
	// The run's record keeps the judge's line: runs show of the run, read
	// later without the judge's flags, has it too.
	var firstRun string
	for line := range strings.SplitSeq(res.errOut, "\n") {
		if rest, ok := strings.CutPrefix(line, "digest: run "); ok {
			firstRun, _, _ = strings.Cut(rest, ":")
		}
	}
	if show := h.run(context.Background(), "runs", "show", firstRun, "-f", "markdown"); show.code != 0 ||
		!strings.Contains(show.out, "Judge openai:grader: 16 verdicts paid for, cost unknown (no price for it).") {
		t.Errorf("runs show %s: exit %d, no judge's line in:\n%s%s", firstRun, show.code, show.out, show.errOut)
	}
	// And in the reports: a rerun pays the judge nothing, and says so.
	for format, want := range map[string]string{
		"markdown": "Judge openai:grader: 0 verdicts paid for, cost unknown (no price for it).",
		"table":    "Judge openai:grader: 0 verdicts paid for, cost unknown (no price for it)",
		"json":     `"judge": {`,
	} {
		res := h.run(context.Background(), "eval", path, "--models", "openai:m", "--judge", "openai:grader", "-f", format)
		if res.code != 0 || !strings.Contains(res.out, want) {
			t.Errorf("-f %s: exit %d, no %q in:\n%s", format, res.code, want, res.out)
		}
	}
}

// TestEvalDryRunWithAJudgeNeedsNoKey: a dry run with --judge needs no
// key, for the judge either, and its JSON has the judge's row. What it
// counts, before and after a run, is eval's TestDryRunCountsTheJudge.
func TestEvalDryRunWithAJudgeNeedsNoKey(t *testing.T) {
	h := newHarness(t)
	res := h.run(context.Background(), "eval", "../testdata/eval/promptfoo.jsonl", "--prompt", "../testdata/eval/prompt.txt",
		"--judge", "openai:grader", "--models", "openai:oracle", "--dry-run", "-f", "json")
	var e struct {
		Models []struct {
			Model           string `json:"model"`
			Judge           bool   `json:"judge"`
			Requests        int    `json:"requests"`
			MaxOutputTokens int    `json:"max_output_tokens"`
		} `json:"models"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.out), &e) != nil || len(e.Models) != 2 {
		t.Fatalf("dry run: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	if j := e.Models[1]; !j.Judge || j.Model != "openai:grader" || j.Requests != 1 || j.MaxOutputTokens != 200 {
		t.Errorf("judge estimate: %+v", j)
	}
}

// TestEvalParsesArguments holds eval's flag parsing apart from its run,
// through runF: what each flag sets, its defaults, and which optional
// parameters count as given.
func TestEvalParsesArguments(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		check func(*EvalOptions) string
	}{
		{[]string{"d.jsonl"}, func(o *EvalOptions) string {
			if o.Dataset != "d.jsonl" || !slices.Equal(o.Models, []string{"offline"}) || o.MaxTokens != 512 || o.Repeat != 1 ||
				o.Concurrency != 4 || o.Timeout != 2*time.Minute || o.Format != "" || o.set("temperature") || o.set("seed") {
				return fmt.Sprintf("defaults: %+v", *o)
			}
			return ""
		}},
		{[]string{"-", "--models", "openai:a,anthropic:b"}, func(o *EvalOptions) string {
			if o.Dataset != "-" || !slices.Equal(o.Models, []string{"openai:a", "anthropic:b"}) {
				return fmt.Sprintf("dataset %q models %v", o.Dataset, o.Models)
			}
			return ""
		}},
		{[]string{"d.jsonl", "-m", "openai:a", "-m", "ollama:b"}, func(o *EvalOptions) string {
			if !slices.Equal(o.Models, []string{"openai:a", "ollama:b"}) {
				return fmt.Sprintf("repeated -m: %v", o.Models)
			}
			return ""
		}},
		{[]string{"d.jsonl", "--temperature", "0", "--seed", "7"}, func(o *EvalOptions) string {
			if !o.set("temperature") || o.Temperature != 0 || !o.set("seed") || o.Seed != 7 {
				return fmt.Sprintf("a temperature of 0 given: set %v, %v; seed %v %d", o.set("temperature"), o.Temperature, o.set("seed"), o.Seed)
			}
			return ""
		}},
		{[]string{"d.jsonl", "--repeat", "3", "--judge", "openai:j", "--assert", "judge", "--min-accuracy", "a=0.9", "-j", "8",
			"--junit", "j.xml", "--html", "r.html", "-f", "csv", "-o", "out.csv", "--dry-run", "--max-cost", "1.5"}, func(o *EvalOptions) string {
			if o.Repeat != 3 || o.Judge != "openai:j" || o.Assert != "judge" || o.MinAccuracy != "a=0.9" || o.Concurrency != 8 ||
				o.JUnit != "j.xml" || o.HTML != "r.html" || o.Format != "csv" || o.Output != "out.csv" || !o.DryRun || o.MaxCost != 1.5 {
				return fmt.Sprintf("flags: %+v", *o)
			}
			return ""
		}},
	} {
		ios, _, _ := iostreams.Test()
		var got *EvalOptions
		cmd := NewEvalCmd(NewFactory(ios, "test"), func(_ context.Context, o *EvalOptions) error {
			got = o
			return nil
		})
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if msg := tt.check(got); msg != "" {
			t.Errorf("%v: %s", tt.args, msg)
		}
	}
	ios, _, _ := iostreams.Test()
	cmd := NewEvalCmd(NewFactory(ios, "test"), func(context.Context, *EvalOptions) error {
		t.Error("ran without a dataset")
		return nil
	})
	cmd.SetArgs(nil)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("no dataset: accepted")
	}
}

// An item with nothing to check is an error of its own, never sent; a
// dataset of such items only, from a file or standard input, exits 2 having
// sent nothing.
func TestEvalNothingToCheck(t *testing.T) {
	h := newHarness(t)
	open := `{"id": "o", "prompt": "What is 1 + 1?"}`
	mixed := writeDataset(t, `{"id": "q", "prompt": "What is 2 + 2?", "expected": "4"}`, open)
	res := h.run(context.Background(), "eval", mixed, "--models", "test:a", "--assert", "numeric", "-f", "json")
	if res.code != 1 || h.calls.Load() != 1 || !strings.Contains(res.out, `"unchecked": 1`) || !strings.Contains(res.errOut, "1 results had nothing to check") {
		t.Errorf("one item unchecked: exit %d, %d calls: %s %s", res.code, h.calls.Load(), res.out, res.errOut)
	}
	only := writeDataset(t, open, open)
	res = h.run(context.Background(), "eval", only, "--models", "test:a", "--assert", "numeric")
	if res.code != 2 || h.calls.Load() != 1 || !strings.Contains(res.errOut, "nothing to check") || !strings.Contains(res.errOut, "Try: ") {
		t.Errorf("every item unchecked: exit %d, %d calls: %s", res.code, h.calls.Load(), res.errOut)
	}
	stdin, err := os.Open(only)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	h.stdin = stdin
	res = h.run(context.Background(), "eval", "-", "--models", "test:a", "--assert", "numeric")
	if res.code != 2 || h.calls.Load() != 1 || !strings.Contains(res.errOut, "nothing to check") {
		t.Errorf("stdin, every item unchecked: exit %d, %d calls: %s", res.code, h.calls.Load(), res.errOut)
	}
	h.stdin = nil
	// An assertion that cannot be checked (no value and no expected answer)
	// is not worth an answer either: not sent, its error named, exit 1.
	bad := writeDataset(t, `{"id": "q", "prompt": "What is 3 + 3?", "expected": "6"}`, `{"id": "b", "prompt": "Say hi", "assert": [{"type": "exact"}]}`)
	res = h.run(context.Background(), "eval", bad, "--models", "test:a", "-f", "json")
	if res.code != 1 || h.calls.Load() != 2 || !strings.Contains(res.out+res.errOut, "no value, and the item has no expected answer") {
		t.Errorf("an assertion that cannot be checked: exit %d, %d calls: %s", res.code, h.calls.Load(), res.errOut)
	}
	// promptfoo test cases with no assertion, run with --prompt: none sent.
	csv := filepath.Join(t.TempDir(), "tests.csv")
	prompt := filepath.Join(t.TempDir(), "prompt.txt")
	os.WriteFile(csv, []byte("city\nParis\nRome\n"), 0o644)
	os.WriteFile(prompt, []byte("Describe {{city}}"), 0o644)
	res = h.run(context.Background(), "eval", csv, "--prompt", prompt, "--models", "test:a")
	if res.code != 2 || h.calls.Load() != 2 || !strings.Contains(res.errOut, "nothing was sent") {
		t.Errorf("promptfoo tests without assertions: exit %d, %d calls: %s", res.code, h.calls.Load(), res.errOut)
	}
}

// A dry run of a model digest has no price for says the cost is unknown,
// not $0.0000; a known model's cost stays a figure.
func TestEvalDryRunUnknownPrice(t *testing.T) {
	h := newHarness(t)
	data := sums(t)
	res := h.run(context.Background(), "eval", data, "--models", "openai:no-such-model,openai:gpt-4o-mini", "--dry-run", "-f", "table")
	if res.code != 0 || !strings.Contains(res.out, "openai:no-such-model: 10 requests (0 cached), ") || !strings.Contains(res.out, "cost unknown") ||
		strings.Count(res.out, "$0.0000\n") != 0 || !strings.Contains(res.out, "gpt-4o-mini: 10 requests (0 cached), 80 input tokens, at most 5120 output tokens, at most $0.0031") {
		t.Errorf("dry run, table: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	res = h.run(context.Background(), "eval", data, "--models", "openai:no-such-model", "--dry-run", "-f", "json")
	if res.code != 0 || !strings.Contains(res.out, `"cost_usd":null`) {
		t.Errorf("dry run, json: exit %d: %s %s", res.code, res.out, res.errOut)
	}
}

// A dataset that can be read only once (a FIFO, `<(jq ... data.jsonl)`,
// /dev/stdin) is read once: looked through before the run, it reached the
// run empty and passed with no items.
func TestEvalDatasetReadOnceFromAPipe(t *testing.T) {
	h := newHarness(t)
	fifo := filepath.Join(t.TempDir(), "items.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	data := `{"id": "a", "prompt": "Say\n42", "expected": "42"}` + "\n" + `{"id": "b", "prompt": "Say\n43", "expected": "43"}` + "\n"
	done := make(chan struct{})
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader, as a shell's writer does
		if err != nil {
			t.Error(err)
			return
		}
		w.WriteString(data)
		w.Close()
		// Whatever opens the FIFO again finds no writer: let it read an
		// end, as a drained pipe gives, rather than wait for ever.
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}()
	res := h.run(context.Background(), "eval", fifo, "--models", "offline", "-f", "json")
	close(done)
	if res.code != 0 || !strings.Contains(res.out, `"items": 2`) || !strings.Contains(res.out, `"passed": 2`) {
		t.Errorf("a FIFO as the dataset: exit %d, want both items passed: %s %s", res.code, res.out, res.errOut)
	}
}

// A dataset with no items (an empty file, every line skipped as invalid,
// nothing on standard input) exits 2, not a green run of nothing, gated or
// not: a CI job whose generated dataset came out empty must fail. Blank
// lines, a dry run and the run not kept are eval's TestDatasetWithNoItems.
func TestEvalDatasetWithNoItems(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	invalid := filepath.Join(dir, "invalid.jsonl")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(invalid, []byte("garbage\n{\"foo\": 1}\n"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"empty", []string{empty}, "empty.jsonl has no items"},
		{"every line skipped", []string{invalid, "--skip-invalid"}, "invalid.jsonl was skipped as invalid (2)"},
		{"gated", []string{empty, "--min-accuracy", "0.5"}, "empty.jsonl has no items"},
	} {
		res := h.run(context.Background(), append([]string{"eval", "--models", "offline", "-f", "json"}, c.args...)...)
		if res.code != 2 || !strings.Contains(res.errOut, c.want) || !strings.Contains(res.errOut, "Try: ") || strings.Count(strings.TrimSpace(res.errOut), "\n") > 2 {
			t.Errorf("%s: exit %d, want 2 and %q: %s %s", c.name, res.code, c.want, res.out, res.errOut)
		}
	}
	h.stdin = strings.NewReader("")
	if res := h.run(context.Background(), "eval", "-", "--models", "offline", "-f", "json"); res.code != 2 || !strings.Contains(res.errOut, "stdin has no items") {
		t.Errorf("nothing on standard input: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	h.stdin = nil
	// No run of nothing is left behind to be listed.
	if res := h.run(context.Background(), "runs", "list", "-f", "json"); res.code != 0 || strings.TrimSpace(res.out) != "[]" {
		t.Errorf("runs after refused datasets: exit %d: %s %s", res.code, res.out, res.errOut)
	}
}

// A dry run writes its estimate where -o says, and refuses, before
// anything is read, the reports it has nothing for: it printed to standard
// output whatever -o, --format, --junit and --html asked, and left those
// files as they were, last run's included.
func TestEvalDryRunWritesWhereItIsAsked(t *testing.T) {
	h := newHarness(t)
	data := sums(t)
	out := filepath.Join(t.TempDir(), "estimate.json")
	res := h.run(context.Background(), "eval", data, "--models", "offline", "--dry-run", "-f", "json", "-o", out)
	written, _ := os.ReadFile(out)
	if res.code != 0 || res.out != "" || !strings.Contains(string(written), `"dry_run":true,"items":10`) {
		t.Errorf("--dry-run -o: exit %d, stdout %q, file %q: %s", res.code, res.out, written, res.errOut)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"-f", "csv"}},
		{[]string{"-f", "markdown"}},
		{[]string{"--junit", filepath.Join(t.TempDir(), "j.xml")}},
		{[]string{"--html", filepath.Join(t.TempDir(), "r.html")}},
	} {
		res := h.run(context.Background(), append([]string{"eval", data, "--models", "offline", "--dry-run"}, c.args...)...)
		if res.code != 2 || res.out != "" || !strings.Contains(res.errOut, "--dry-run") || !strings.Contains(res.errOut, "Try: ") {
			t.Errorf("--dry-run %v: exit %d: %s %s", c.args, res.code, res.out, res.errOut)
		}
	}
}

// digest runs reads: a --db that does not exist (a typo, another
// machine's path) is said to be missing, and is not created empty.
func TestRunsDoNotCreateAMissingDatabase(t *testing.T) {
	h := newHarness(t)
	res := h.run(context.Background(), "runs", "list", "-f", "json")
	if res.code != 0 || strings.TrimSpace(res.out) != "[]" || !strings.Contains(res.errOut, "no database at "+h.db) || !strings.Contains(res.errOut, "Try: --db") {
		t.Errorf("runs list: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	res = h.run(context.Background(), "runs", "show", "2026")
	if res.code != 2 || !strings.Contains(res.errOut, "no database at "+h.db) || !strings.Contains(res.errOut, "Try: --db") {
		t.Errorf("runs show: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	if _, err := os.Stat(h.db); err == nil {
		t.Errorf("runs created %s", h.db)
	}
}

// An interrupted run exits 130 saying its results are stored, and its
// report holds the results stored before the stop: runs show says so, so
// that a part is not taken for the whole. What is kept and resumed is
// eval's TestInterruptKeepsAnswersAndResumes.
func TestRunsShowSaysARunIsIncomplete(t *testing.T) {
	h := newHarness(t)
	data := sums(t)
	ctx, cancel := context.WithCancel(context.Background())
	var answers atomic.Int32
	h.wrap = func(p provider.Provider) provider.Provider {
		return provider.Func(func(c context.Context, req provider.Request) (provider.Response, error) {
			if answers.Add(1) > 3 {
				cancel() // the fourth is given up on as the run stops
				return provider.Response{}, context.Canceled
			}
			return p.Complete(c, req)
		})
	}
	res := h.run(ctx, "eval", data, "--models", "test:a", "-j", "1", "-f", "json")
	if res.code != 130 || !strings.Contains(res.errOut, "interrupted; results so far are stored") {
		t.Fatalf("interrupted run: exit %d: %s", res.code, res.errOut)
	}
	list := h.run(context.Background(), "runs", "list", "-f", "json")
	var runs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(list.out), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs list: %v %s", err, list.out)
	}
	show := h.run(context.Background(), "runs", "show", runs[0].ID, "-f", "json")
	if show.code != 0 || !strings.Contains(show.errOut, "run "+runs[0].ID+" is incomplete") || !strings.Contains(show.errOut, "Try: ") {
		t.Errorf("runs show of an interrupted run: exit %d: %s", show.code, show.errOut)
	}
	h.wrap = nil
	h.run(context.Background(), "eval", data, "--models", "test:a", "-f", "json")
	list = h.run(context.Background(), "runs", "list", "-f", "json")
	json.Unmarshal([]byte(list.out), &runs)
	if show := h.run(context.Background(), "runs", "show", runs[0].ID, "-f", "json"); show.code != 0 || strings.Contains(show.errOut, "incomplete") {
		t.Errorf("runs show of a finished run: exit %d: %s", show.code, show.errOut)
	}
}

// --assert's help names every assertion type scoring knows, as the README
// does: json-schema was missing.
func TestEvalAssertHelpNamesEveryType(t *testing.T) {
	ios, _, _ := iostreams.Test()
	usage := NewEvalCmd(NewFactory(ios, "test"), nil).Flags().Lookup("assert").Usage
	for _, typ := range dataset.AssertionTypes {
		if !strings.Contains(usage, typ) {
			t.Errorf("--assert help lacks %s: %s", typ, usage)
		}
	}
	if !strings.Contains(usage, "not-") {
		t.Errorf("--assert help does not say each has a not- form: %s", usage)
	}
}

// TestEvalRefusesBadModelSpecs covers eval's side of the model checks that
// TestErrorsAndExitCodes and TestHostedModelWithoutKeyNamesTheVariable make
// for summarize: a usage error, exit 2, before anything is read or sent.
func TestEvalRefusesBadModelSpecs(t *testing.T) {
	data := sums(t)
	for _, tt := range []struct {
		models string
		wants  []string
	}{
		{"acme:m1", []string{`unknown provider "acme"`, "openai, openai-responses, anthropic, ollama"}},
		{"gpt4", []string{`"gpt4" is not PROVIDER:MODEL`}},
		{"openai:", []string{`"openai:" is not PROVIDER:MODEL`}},
		{"offline,offline", []string{"--models names offline twice"}},
		{"openai:gpt-4o-mini", []string{"needs an API key in OPENAI_API_KEY", "Try: export OPENAI_API_KEY"}},
		{"anthropic:claude-haiku-4-5", []string{"needs an API key in ANTHROPIC_API_KEY", "Try: export ANTHROPIC_API_KEY"}},
	} {
		h := newHarness(t)
		res := h.run(context.Background(), "eval", data, "--models", tt.models)
		t.Run(tt.models, func(t *testing.T) { oneLineError(t, res, 2, tt.wants...) })
		if h.calls.Load() != 0 || res.out != "" {
			t.Errorf("%s: %d calls, stdout %q", tt.models, h.calls.Load(), res.out)
		}
		if _, err := os.Stat(h.db); err == nil {
			t.Errorf("%s: a usage error created the database", tt.models)
		}
	}
}
