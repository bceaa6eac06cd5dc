package cmd

// How eval fails, with its exit code and its one line; what a failed run
// keeps is internal/eval's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestEvalFailsWhenRequestsFail: a run whose requests failed exits 1 after
// writing every report, and says how many failed and why; one stopped
// before any result was stored writes none.
func TestEvalFailsWhenRequestsFail(t *testing.T) {
	srv := arithmeticServer(t)
	data := sums(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-test"
	out, none := t.TempDir(), t.TempDir()
	// Every request a 404: eight in a row stop the run (engine's
	// TestDeadServerStopsTheRunWithinAMinute); the reports, a CI job's
	// JUnit and step summary among them, hold what was stored before.
	h.env["GITHUB_STEP_SUMMARY"] = filepath.Join(out, "summary.md")
	res := h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", srv.URL()+"/nope/v1", "-j", "1",
		"--junit", filepath.Join(out, "junit.xml"))
	delete(h.env, "GITHUB_STEP_SUMMARY")
	oneLineError(t, res, 1, "openai:strong failed 8 requests in a row", "HTTP 404", "check the base URL", "results stored before the run stopped")
	for _, name := range []string{"junit.xml", "summary.md"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || !bytes.Contains(b, []byte("HTTP 404")) {
			t.Errorf("%s not written when the run stopped (%v):\n%s", name, err, b)
		}
	}
	var doc evalJSON
	if err := json.Unmarshal([]byte(res.out), &doc); err != nil || len(doc.Models) != 1 || doc.Models[0].Errors == 0 ||
		!strings.Contains(res.errOut, fmt.Sprintf("the reports hold the %d results stored", doc.Models[0].Items)) {
		t.Errorf("the report on standard output does not hold the stored errors the message counts (%v): %s", err, res.out)
	}

	// Told never to stop, it asks for all, then fails naming the first.
	res = h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", srv.URL()+"/nope/v1", "--max-failures", "0", "-f", "json")
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	if last := lines[len(lines)-1]; res.code != 1 || !strings.Contains(last, "10 results ended in error (openai:strong 10); the first, openai:strong on q0: ") ||
		!strings.Contains(last, "HTTP 404") || !strings.Contains(last, "Try: ") || !strings.Contains(res.errOut, ", 10 errors,") {
		t.Errorf("exit %d, stderr %q: want 1, the count of errors and the first one", res.code, res.errOut)
	}
	// A refused key stops the run before any result was stored (eval's
	// TestRunStoppedBeforeAnyResultIsDropped): no report, where an empty
	// JUnit of 0 tests would show in a CI test view as a pass.
	refusing := fakeprovider.Start(t, fakeprovider.Config{APIKey: "sk-right"})
	h.env["GITHUB_STEP_SUMMARY"] = filepath.Join(none, "summary.md")
	res = h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", refusing.OpenAIBaseURL(),
		"-f", "json", "-o", filepath.Join(none, "report.json"), "--junit", filepath.Join(none, "junit.xml"))
	oneLineError(t, res, 1, "HTTP 401", "OPENAI_API_KEY")
	if written, _ := os.ReadDir(none); len(written) != 0 || strings.Contains(res.errOut, "the reports hold") || refusing.Stats().Unauthorized == 0 {
		t.Errorf("%d requests refused; reports %v written for a run that stored no result: %s", refusing.Stats().Unauthorized, written, res.errOut)
	}
}

// TestEvalDatasetsThatCannotRun: a dataset with no items or nothing to
// check exits 2 having sent nothing, gated or not (a CI job's empty
// dataset must fail); a bad line, an unchecked item, a judge assertion on
// standard input without --judge exit 1. The runs are eval's
// TestDatasetWithNoItems, TestBadLineStopsTheRun,
// TestItemsWithNothingToCheckAreNotSent and
// TestJudgeAssertionWithoutAJudgeSaysGiveOne.
func TestEvalDatasetsThatCannotRun(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	write := func(name, data string) string {
		os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
		return filepath.Join(dir, name)
	}
	open := `{"id": "o", "prompt": "What is 1 + 1?"}` + "\n"
	empty, invalid, only := write("empty.jsonl", ""), write("invalid.jsonl", "garbage\n{\"foo\": 1}\n"), write("open.jsonl", open+open)
	csv, prompt := write("tests.csv", "city\nParis\nRome\n"), write("prompt.txt", "Describe {{city}}")
	for _, c := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{empty}, "", "empty.jsonl has no items"},
		{[]string{invalid, "--skip-invalid"}, "", "invalid.jsonl was skipped as invalid (2)"},
		{[]string{empty, "--min-accuracy", "0.5"}, "", "empty.jsonl has no items"},
		{[]string{"-"}, "", "stdin has no items"},
		{[]string{only, "--assert", "numeric"}, "", "nothing to check"},
		{[]string{"-", "--assert", "numeric"}, open, "nothing to check"},
		{[]string{csv, "--prompt", prompt}, "", "nothing was sent"},
	} {
		h.stdin = strings.NewReader(c.stdin)
		res := h.run(context.Background(), append([]string{"eval", "--models", "test:a", "-f", "json"}, c.args...)...)
		if res.code != 2 || h.calls.Load() != 0 || !strings.Contains(res.errOut, c.want) || !strings.Contains(res.errOut, "Try: ") || strings.Count(strings.TrimSpace(res.errOut), "\n") > 2 {
			t.Errorf("%v: exit %d, %d calls; want 2, none and %q: %s %s", c.args, res.code, h.calls.Load(), c.want, res.out, res.errOut)
		}
	}
	h.stdin = nil
	bad := writeDataset(t, `{"prompt": "ok", "expected": "1"}`, `{"prompt": 7}`, `not json`)
	if res := h.run(context.Background(), "eval", bad); res.code != 1 || !strings.Contains(res.errOut, bad+":2:") {
		t.Errorf("bad line: exit %d: %q", res.code, res.errOut)
	}
	if res := h.run(context.Background(), "eval", bad, "--skip-invalid", "-f", "json"); res.code != 0 || strings.Count(res.errOut, "skipped") != 2 {
		t.Errorf("--skip-invalid: exit %d: %q", res.code, res.errOut)
	}
	h.calls.Store(0)
	mixed := writeDataset(t, `{"id": "q", "prompt": "What is 2 + 2?", "expected": "4"}`, strings.TrimSpace(open))
	res := h.run(context.Background(), "eval", mixed, "--models", "test:a", "--assert", "numeric", "-f", "json")
	if res.code != 1 || h.calls.Load() != 1 || !strings.Contains(res.out, `"unchecked": 1`) || !strings.Contains(res.errOut, "1 results had nothing to check") {
		t.Errorf("one item unchecked: exit %d, %d calls: %s %s", res.code, h.calls.Load(), res.out, res.errOut)
	}
	// Standard input is not looked through for judge assertions first: the
	// error says to give --judge, since the same command fails alike.
	h.stdin = strings.NewReader(`{"id": "polite", "prompt": "Be nice", "assert": [{"type": "llm-rubric", "value": "polite"}]}` + "\n")
	res = h.run(context.Background(), "eval", "-", "--models", "offline", "-f", "json")
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	if last := lines[len(lines)-1]; res.code != 1 || !strings.Contains(res.out, `"dataset": "-"`) || !strings.Contains(last, "needs --judge MODEL") || !strings.Contains(last, "Try: --judge MODEL") {
		t.Errorf("judge assertions on stdin: exit %d, last line %q: want the error to say to give --judge", res.code, last)
	}
}
