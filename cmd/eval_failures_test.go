package cmd

// How eval fails: requests that fail, a configuration that could only fail,
// a judge missing, each with its exit code and its one line. What a run
// keeps when it fails is tested in internal/eval.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalFailsWhenRequestsFail: a run whose requests failed exits 1 after
// writing every report, and says how many failed and why; a configuration
// that could only fail (a base URL without a scheme, judge assertions
// without --judge) is a usage error, exit 2, before anything is sent.
func TestEvalFailsWhenRequestsFail(t *testing.T) {
	srv := arithmeticServer(t)
	data := sums(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-test"
	out := t.TempDir()

	// A base URL one path off: every request is a 404. Eight in a row stop
	// the run, naming the model, the last error and what to try; the
	// reports asked for hold what was stored before the stop, so that a CI
	// job's JUnit and step summary show the failures.
	stopped := t.TempDir()
	summary := filepath.Join(stopped, "summary.md")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	res := h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", srv.URL()+"/nope/v1", "-j", "1",
		"--junit", filepath.Join(stopped, "junit.xml"))
	delete(h.env, "GITHUB_STEP_SUMMARY")
	oneLineError(t, res, 1, "openai:strong failed 8 requests in a row", "HTTP 404", "check the base URL", "results stored before the run stopped")
	if n := srv.Stats().NotFound; n != 8 {
		t.Errorf("%d requests before the run stopped, want 8", n)
	}
	for _, name := range []string{"junit.xml", "summary.md"} {
		if b, err := os.ReadFile(filepath.Join(stopped, name)); err != nil || !bytes.Contains(b, []byte("HTTP 404")) {
			t.Errorf("%s not written when the run stopped (%v):\n%s", name, err, b)
		}
	}
	var doc struct {
		Models []struct{ Items, Errors int }
	}
	if err := json.Unmarshal([]byte(res.out), &doc); err != nil || len(doc.Models) != 1 || doc.Models[0].Errors == 0 ||
		!strings.Contains(res.errOut, fmt.Sprintf("the reports hold the %d results stored", doc.Models[0].Items)) {
		t.Errorf("the report on standard output does not hold the stored errors the message counts (%v): %s", err, res.out)
	}

	// Told never to stop, the run asks for every item, writes every report,
	// then fails.
	res = h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", srv.URL()+"/nope/v1", "--max-failures", "0",
		"-f", "json", "-o", filepath.Join(out, "r.json"), "--junit", filepath.Join(out, "junit.xml"))
	if res.code != 1 {
		t.Fatalf("every request a 404: exit %d, want 1: %s", res.code, res.errOut)
	}
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "10 results ended in error (openai:strong 10)") || !strings.Contains(last, "HTTP 404") {
		t.Errorf("last line %q, want the count of errors and the first one", last)
	}
	if !strings.Contains(res.errOut, ", 10 errors,") {
		t.Errorf("the closing line does not count the errors: %q", res.errOut)
	}
	for name, want := range map[string]string{"r.json": `"errors": 10`, "junit.xml": "HTTP 404"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s not written before the failure (%v)", name, err)
		}
	}

	before := srv.Stats().Requests
	judged := writeDataset(t, `{"prompt": "2+2", "expected": "4"}`, `{"prompt": "Be nice", "assert": [{"type": "llm-rubric", "value": "polite"}]}`)
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"no scheme", []string{"eval", data, "--models", "openai:strong", "--base-url", "localhost:11434/v1"},
			[]string{"--base-url localhost:11434/v1 has no http:// or https://", "Try: http://localhost:11434/v1"}},
		{"no scheme in the variable", []string{"eval", data, "--models", "anthropic:claude-haiku-4-5"},
			[]string{"ANTHROPIC_BASE_URL"}},
		{"another scheme", []string{"eval", data, "--models", "openai:strong", "--base-url", "ftp://host/v1"},
			[]string{"is not an http or https URL"}},
		{"a judge assertion without --judge", []string{"eval", judged, "--models", "openai:strong", "--base-url", srv.OpenAIBaseURL()},
			[]string{judged + ":2 has a judge assertion", "--judge is not set"}},
		{"--assert judge without --judge", []string{"eval", data, "--models", "openai:strong", "--base-url", srv.OpenAIBaseURL(), "--assert", "judge"},
			[]string{"--assert judge needs a grading model"}},
		{"a dry run too", []string{"eval", judged, "--dry-run"}, []string{"has a judge assertion"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.env["ANTHROPIC_BASE_URL"] = "api.anthropic.com"
			h.env["ANTHROPIC_API_KEY"] = "sk-ant"
			oneLineError(t, h.run(context.Background(), tt.args...), 2, tt.want...)
		})
	}
	if n := srv.Stats().Requests - before; n != 0 {
		t.Errorf("%d requests sent by runs refused as usage errors", n)
	}
}

// TestJudgeMissingOnStdinSaysGiveAJudge: a dataset read from standard
// input cannot be checked for judge assertions before the run; the
// results that needed a judge end in error, and the error says to give
// one, since running the same command again fails alike.
func TestJudgeMissingOnStdinSaysGiveAJudge(t *testing.T) {
	h := newHarness(t)
	h.stdin = strings.NewReader(`{"id": "polite", "prompt": "Be nice", "assert": [{"type": "llm-rubric", "value": "polite"}]}` + "\n")
	res := h.run(context.Background(), "eval", "-", "--models", "offline", "-f", "json")
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	last := lines[len(lines)-1]
	if res.code != 1 || !strings.Contains(last, "needs --judge MODEL") || !strings.Contains(last, "Try: --judge MODEL") {
		t.Errorf("exit %d, last line %q: want the error to say to give --judge", res.code, last)
	}
}
