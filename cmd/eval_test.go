package cmd

// eval's flags, parsed and refused, its gates, runs list and show; what a
// run does is internal/eval's.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
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

// evalJSON is what tests read of eval's JSON report.
type evalJSON struct {
	RunID  string `json:"run_id"`
	Models []struct {
		Model                         string
		Items, Passed, Errors, Cached int
	}
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

// TestEvalParsesArguments, through runF: what each flag sets, its defaults,
// which optional parameters count as given; no dataset is refused; and
// --assert's help names every assertion type scoring knows.
func TestEvalParsesArguments(t *testing.T) {
	parse := func(args ...string) (o *EvalOptions, err error) {
		ios, _, _ := iostreams.Test()
		cmd := NewEvalCmd(NewFactory(ios, "test"), func(_ context.Context, got *EvalOptions) error { o = got; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err = cmd.Execute()
		return o, err
	}
	if o, err := parse("d.jsonl"); err != nil || o.Dataset != "d.jsonl" || !slices.Equal(o.Models, []string{"offline"}) || o.MaxTokens != 512 || o.Repeat != 1 ||
		o.Concurrency != 4 || o.Timeout != 2*time.Minute || o.Format != "" || o.set("temperature") || o.set("seed") {
		t.Errorf("defaults: %v, %+v", err, o)
	}
	o, err := parse("-", "--models", "openai:a,anthropic:b", "-m", "ollama:b", "--temperature", "0", "--seed", "7", "--repeat", "3", "--judge", "openai:j",
		"--assert", "judge", "--min-accuracy", "a=0.9", "-j", "8", "--junit", "j.xml", "--html", "r.html", "-f", "csv", "-o", "out.csv", "--dry-run", "--max-cost", "1.5")
	if err != nil || o.Dataset != "-" || !slices.Equal(o.Models, []string{"openai:a", "anthropic:b", "ollama:b"}) || !o.set("temperature") || o.Temperature != 0 ||
		!o.set("seed") || o.Seed != 7 || o.Repeat != 3 || o.Judge != "openai:j" || o.Assert != "judge" || o.MinAccuracy != "a=0.9" || o.Concurrency != 8 ||
		o.JUnit != "j.xml" || o.HTML != "r.html" || o.Format != "csv" || o.Output != "out.csv" || !o.DryRun || o.MaxCost != 1.5 {
		t.Errorf("flags: %v, %+v", err, o)
	}
	if o, err := parse(); err == nil || o != nil {
		t.Error("no dataset: accepted")
	}
	ios, _, _ := iostreams.Test()
	usage := NewEvalCmd(NewFactory(ios, "test"), nil).Flags().Lookup("assert").Usage
	for _, typ := range append(slices.Clone(dataset.AssertionTypes), "not-") {
		if !strings.Contains(usage, typ) {
			t.Errorf("--assert help lacks %s: %s", typ, usage)
		}
	}
}

// TestEvalRefusesBadModelSpecs: bad models (summarize's are
// TestErrorsAndExitCodes and TestHostedModelWithoutKeyNamesTheVariable) and
// flags that could only fail are a usage error in one line, exit 2, before
// anything is read, sent or created.
func TestEvalRefusesBadModelSpecs(t *testing.T) {
	data := sums(t)
	judged := writeDataset(t, `{"prompt": "2+2", "expected": "4"}`, `{"prompt": "Be nice", "assert": [{"type": "llm-rubric", "value": "polite"}]}`)
	h := newHarness(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{data, "--models", "acme:m1"}, `unknown provider "acme" in model acme:m1. Try: one of offline, openai, openai-responses, anthropic, ollama`},
		{[]string{data, "--models", "gpt4"}, `"gpt4" is not PROVIDER:MODEL`},
		{[]string{data, "--models", "offline,offline"}, "--models names offline twice"},
		{[]string{data, "--models", "openai:gpt-4o-mini"}, "needs an API key in OPENAI_API_KEY, which is not set. Try: export OPENAI_API_KEY"},
		{[]string{data, "--models", "anthropic:claude-haiku-4-5"}, "needs an API key in ANTHROPIC_API_KEY, which is not set. Try: export ANTHROPIC_API_KEY"},
		{[]string{data, "--min-accuracy", "1.5"}, "is not an accuracy between 0 and 1"},
		{[]string{data, "--min-accuracy", "openai:x=0.5"}, `--min-accuracy names "openai:x", which is not among --models. Try: one of offline, as --min-accuracy offline=0.5`},
		{[]string{data, "-f", "yaml"}, `unknown format "yaml"`},
		{[]string{data, "--min", "Bias=0.9"}, `metric "Bias" is not a lower-case identifier`},
		{[]string{data, "--min", "bias=2"}, "is not a pass rate between 0 and 1"},
		{[]string{data, "--min", "openai:nobody:bias=0.5"}, `--min names "openai:nobody", which is not among --models`},
		{[]string{data, "--assert", "numeric@Bias"}, `metric "Bias" is not a lower-case identifier`},
		{[]string{filepath.Join(t.TempDir(), "missing.jsonl")}, "missing.jsonl: no such file"},
		{[]string{judged}, judged + ":2 has a judge assertion, which needs a grading model, and --judge is not set"},
		{[]string{judged, "--dry-run"}, judged + ":2 has a judge assertion"},
		{[]string{data, "--assert", "judge"}, "--assert judge needs a grading model"},
		// A dry run has counts, not results, to report.
		{[]string{data, "--dry-run", "-f", "csv"}, "--dry-run writes its estimate as table or json, not csv. Try: "},
		{[]string{data, "--dry-run", "--junit", filepath.Join(t.TempDir(), "j.xml")}, "--dry-run has no results for --junit. Try: "},
		{[]string{data, "--dry-run", "--html", filepath.Join(t.TempDir(), "r.html")}, "--dry-run has no results for --html. Try: "},
		{[]string{data, "--models", "ollama:m", "--base-url", "localhost:11434/v1"}, "--base-url localhost:11434/v1 has no http:// or https:// in front. Try: http://localhost:11434/v1"},
		{[]string{data, "--models", "ollama:m", "--base-url", "ftp://host/v1"}, "is not an http or https URL"},
	} {
		res := h.run(context.Background(), append([]string{"eval"}, tt.args...)...)
		if msg := strings.TrimSpace(res.errOut); res.code != 2 || res.out != "" || !strings.HasPrefix(msg, "digest: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want 2 and one line saying %q", tt.args, res.code, res.out, res.errOut, tt.want)
		}
	}
	h.env["ANTHROPIC_BASE_URL"] = "api.anthropic.com" // the provider's variable, read before its key
	oneLineError(t, h.run(context.Background(), "eval", data, "--models", "anthropic:claude-haiku-4-5"), 2, "ANTHROPIC_BASE_URL api.anthropic.com has no http:// or https://")
	if _, err := os.Stat(h.db); h.calls.Load() != 0 || err == nil {
		t.Errorf("%d calls; a usage error created the database (%v)", h.calls.Load(), err)
	}
}

// TestEvalGatesExit3AfterWritingReports: a model below --min-accuracy or a
// metric's --min (--assert TYPE@METRIC names one; eval's
// TestNamedMetricsWithAGradedJudge scores them) makes eval exit 3 after
// writing every report; a gate on one model, or overridden by its own,
// passes; one on a metric the run lacks fails. --max-cost, priced by
// --model-config, exits 1 (eval's TestRunKeepsUnderMaxCost).
func TestEvalGatesExit3AfterWritingReports(t *testing.T) {
	srv := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	dir := t.TempDir()
	summary, junit, cfg := filepath.Join(dir, "summary.md"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "models.json")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	price := `{"price": {"input_per_million": 10000, "output_per_million": 10000}}`
	os.WriteFile(cfg, []byte(`{"openai:strong": `+price+`, "openai:weak": `+price+`}`), 0o600)
	own, _ := os.ReadFile(sums(t)) // its items without their own assertions, for --assert's
	data := writeDataset(t, strings.TrimSpace(strings.ReplaceAll(string(own), `, "assert": [{"type": "numeric"}]`, "")))
	eval := func(args ...string) result {
		return h.run(context.Background(), append([]string{"eval", data, "--models", "openai:strong,openai:weak", "--base-url", srv.OpenAIBaseURL(), "-f", "json"}, args...)...)
	}
	res := eval("--assert", "numeric", "--min-accuracy", "0.8", "--junit", junit)
	if res.code != 3 || !strings.Contains(res.errOut, "below --min-accuracy: openai:weak 60.0% < 80.0%") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	for _, path := range []string{junit, summary} {
		if info, err := os.Stat(path); err != nil || info.Size() == 0 {
			t.Errorf("%s not written before the gate failed: %v", path, err)
		}
	}
	delete(h.env, "GITHUB_STEP_SUMMARY")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--assert", "numeric", "--min-accuracy", "openai:strong=0.9"}, 0, ""},
		{[]string{"--assert", "numeric", "--min-accuracy", "0.8", "--min", "openai:weak:accuracy=0.5"}, 0, ""},
		{[]string{"--assert", "numeric@bias", "--min", "bias=0.9"}, 3, "below --min: openai:weak bias 60.0% < 90.0%"},
		{[]string{"--assert", "numeric@bias", "--min", "openai:strong:bias=0.9"}, 0, ""},
		{[]string{"--assert", "numeric@bias", "--min", "tone=0.5"}, 3, "no metric tone in this run"},
		{[]string{"--model-config", cfg, "--max-cost", "0.5", "--max-tokens", "10", "-j", "1"}, 1, "stopped before --max-cost $0.5"},
	} {
		if res := eval(c.args...); res.code != c.code || !strings.Contains(res.errOut, c.want) {
			t.Errorf("%v: exit %d, want %d and %q: %s", c.args, res.code, c.code, c.want, res.errOut)
		}
	}
}

// TestRunsListMarksReruns: a rerun from the database (eval's
// TestRerunReportsTheOriginalFigures) is a run that runs list marks as a
// rerun of the first, with each model's accuracy; one that asked less
// (--limit) is none; runs show reads a run back, and says if unfinished.
func TestRunsListMarksReruns(t *testing.T) {
	srv := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	ctx := context.Background()
	// No database yet: said so, and an empty list.
	if res := h.run(ctx, "runs", "list", "-f", "json"); res.code != 0 || strings.TrimSpace(res.out) != "[]" || !strings.Contains(res.errOut, "no database at "+h.db) || !strings.Contains(res.errOut, "Try: --db") {
		t.Errorf("runs list without a database: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	args := []string{"eval", sums(t), "--models", "openai:strong,openai:weak", "--base-url", srv.OpenAIBaseURL(), "-f", "json"}
	var reps [2]evalJSON
	for i := range reps {
		if res := h.run(ctx, args...); res.code != 0 || json.Unmarshal([]byte(res.out), &reps[i]) != nil {
			t.Fatalf("run %d: exit %d: %s %s", i, res.code, res.out, res.errOut)
		}
	}
	if reps[1].RunID == reps[0].RunID || reps[1].Models[1].Cached != 10 || srv.Stats().Requests != 20 {
		t.Errorf("runs %s and %s, %d requests: want two runs, the second all cached", reps[0].RunID, reps[1].RunID, srv.Stats().Requests)
	}
	var runs []struct {
		ID       string
		RerunOf  string `json:"rerun_of"`
		Accuracy map[string]float64
	}
	if list := h.run(ctx, "runs", "list", "--format", "json"); list.code != 0 || json.Unmarshal([]byte(list.out), &runs) != nil || len(runs) != 2 ||
		runs[0].ID != reps[1].RunID || runs[0].RerunOf != reps[0].RunID || runs[1].RerunOf != "" ||
		runs[1].Accuracy["openai:strong"] != 1 || runs[1].Accuracy["openai:weak"] != 0.6 {
		t.Errorf("runs list %+v: want the rerun marked as one of %s, accuracies 1 and 0.6", runs, reps[0].RunID)
	}
	if res := h.run(ctx, "runs", "list"); !strings.Contains(res.out, "openai:strong 100.0%, openai:weak 60.0%") || !strings.Contains(res.out, "RERUN OF") {
		t.Errorf("runs list table: %s", res.out)
	}
	if res := h.run(ctx, append(args, "--limit", "5")...); res.code != 0 {
		t.Fatalf("limited rerun: exit %d %s", res.code, res.errOut)
	}
	runs = nil // decoding into the old elements would keep their rerun_of
	if list := h.run(ctx, "runs", "list", "--format", "json"); json.Unmarshal([]byte(list.out), &runs) != nil || len(runs) != 3 || runs[0].RerunOf != "" || runs[1].RerunOf != reps[0].RunID {
		t.Errorf("a cached run of 5 of the 10 items is listed as a rerun: %+v", runs)
	}
	if res := h.run(ctx, "runs", "list", "-f", "yaml"); res.code != 2 {
		t.Errorf("runs list -f yaml: exit %d, want 2", res.code)
	}
	if show := h.run(ctx, "runs", "show", reps[0].RunID, "-f", "jsonl"); show.code != 0 || strings.Count(show.out, `"pass":true`) != 16 || strings.Contains(show.out, `"cached":true`) || strings.Contains(show.errOut, "incomplete") {
		t.Errorf("runs show: %d %s %s", show.code, show.out, show.errOut)
	}
	// Unfinished (the interrupt is TestInterruptWhilePollingNamesAStoredRun's),
	// so that a part is not taken for the whole.
	st, err := sqlite.Open(ctx, h.db)
	if err != nil || st.StartRun(ctx, store.EvalRun{ID: "20260101-000000-abcdef", Dataset: "d", Models: []string{"offline"}, CreatedAt: time.Now()}) != nil {
		t.Fatal(err)
	}
	st.Close()
	if show := h.run(ctx, "runs", "show", "20260101", "-f", "json"); show.code != 0 || !strings.Contains(show.errOut, "run 20260101-000000-abcdef is incomplete") || !strings.Contains(show.errOut, "Try: ") {
		t.Errorf("runs show of an unfinished run: exit %d: %s", show.code, show.errOut)
	}
}
