package cmd

// Where eval's reports and payloads go; what each format holds is
// evalreport's, what the store keeps internal/eval's.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/payloads"
)

// TestEvalWritesEachReportWhereAsked: each --format goes to the file -o
// names, nothing to standard output; --junit, --html and the step summary
// to theirs; without -o, JSON off a terminal to standard output. The
// judge's verdicts have a line on standard error, the judge served from
// OPENAI_BASE_URL. The scores are eval's TestExampleDatasetsPassWhenAnsweredRight.
func TestEvalWritesEachReportWhereAsked(t *testing.T) {
	srv := oracleServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"], h.env["OPENAI_BASE_URL"] = "k", srv.OpenAIBaseURL()
	dir := t.TempDir()
	h.env["GITHUB_STEP_SUMMARY"] = filepath.Join(dir, "summary.md")
	eval := func(args ...string) result {
		return h.run(context.Background(), append([]string{"eval", "../testdata/eval/promptfoo.jsonl", "--prompt", "../testdata/eval/prompt.txt",
			"--judge", "openai:grader", "--models", "openai:oracle", "--base-url", srv.OpenAIBaseURL()}, args...)...)
	}
	res := eval("--junit", filepath.Join(dir, "junit.xml"), "--html", filepath.Join(dir, "report.html"))
	if res.code != 0 || !strings.HasPrefix(res.out, "{") || !strings.Contains(res.errOut, "digest: judge openai:grader: 1 verdicts paid for, cost unknown") {
		t.Fatalf("exit %d: %s %s", res.code, res.out, res.errOut)
	}
	delete(h.env, "GITHUB_STEP_SUMMARY")
	files := map[string]string{"junit.xml": "<testsuites", "report.html": "<!DOCTYPE html>", "summary.md": "| openai:oracle |"}
	for format, want := range map[string]string{"json": `"run_id"`, "jsonl": `{"model":"openai:oracle"`, "csv": "model,item,", "markdown": "| openai:oracle |", "table": "MODEL"} {
		if res := eval("-f", format, "-o", filepath.Join(dir, "report."+format)); res.code != 0 || res.out != "" {
			t.Errorf("-f %s -o: exit %d, stdout %q: %s", format, res.code, res.out, res.errOut)
		}
		files["report."+format] = want
	}
	for name, want := range files {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s (%v): no %q in:\n%.300s", name, err, want, b)
		}
	}
	if n := srv.Stats().Requests; n != 5 {
		t.Errorf("%d requests, want the 4 answers and 1 verdict once", n)
	}
}

// TestEvalDryRunWritesItsEstimate: a dry run needs no key, for the judge
// either, and creates no database; its estimate, as lines or JSON, says a
// cost unknown rather than $0 for a model digest has no price for, and
// goes where -o says. What it counts is eval's
// TestDryRunCountsAndSendsNothing and TestDryRunCountsTheJudge.
func TestEvalDryRunWritesItsEstimate(t *testing.T) {
	h := newHarness(t)
	data := sums(t)
	dry := func(args ...string) result {
		return h.run(context.Background(), append([]string{"eval", data, "--dry-run"}, args...)...)
	}
	res := dry("--models", "openai:no-such-model,openai:gpt-4o-mini", "-f", "table")
	if res.code != 0 || !strings.Contains(res.out, "dry run: openai:no-such-model: 10 requests (0 cached), ") || !strings.Contains(res.out, "cost unknown") ||
		strings.Contains(res.out, "$0.0000\n") || !strings.Contains(res.out, "gpt-4o-mini: 10 requests (0 cached), 80 input tokens, at most 5120 output tokens, at most $0.0031") {
		t.Errorf("dry run, table: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	res = h.run(context.Background(), "eval", "../testdata/eval/promptfoo.jsonl", "--prompt", "../testdata/eval/prompt.txt",
		"--judge", "openai:grader", "--models", "openai:oracle", "--dry-run", "-f", "json")
	if res.code != 0 || !strings.Contains(res.out, `{"model":"openai:grader","judge":true,"requests":1,`) || !strings.Contains(res.out, `"cost_usd":null`) {
		t.Errorf("dry run with a judge, as JSON: exit %d: %s %s", res.code, res.out, res.errOut)
	}
	out := filepath.Join(t.TempDir(), "estimate.json")
	res = dry("--models", "offline", "-f", "json", "-o", out)
	if written, _ := os.ReadFile(out); res.code != 0 || res.out != "" || !strings.Contains(string(written), `"dry_run":true,"items":10`) {
		t.Errorf("--dry-run -o: exit %d, stdout %q, file %q: %s", res.code, res.out, written, res.errOut)
	}
	if _, err := os.Stat(h.db); !os.IsNotExist(err) {
		t.Error("a dry run created the database")
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
	var done atomic.Bool
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // waits for the reader, as a shell's writer does
			w.WriteString(`{"id": "a", "prompt": "Say\n42", "expected": "42"}` + "\n" + `{"id": "b", "prompt": "Say\n43", "expected": "43"}` + "\n")
			w.Close()
		}
		// Whatever opens it again reads an end, not waits for ever.
		for !done.Load() {
			time.Sleep(50 * time.Millisecond)
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}()
	res := h.run(context.Background(), "eval", fifo, "--models", "offline", "-f", "json")
	done.Store(true)
	if res.code != 0 || !strings.Contains(res.out, `"items": 2`) || !strings.Contains(res.out, `"passed": 2`) {
		t.Errorf("a FIFO as the dataset: exit %d, want both items passed: %s %s", res.code, res.out, res.errOut)
	}
}

// TestEvalPayloadsFlagAndVariable: DIGEST_PAYLOADS reaches the run, whose
// payloads become objects in the store; --payloads reaches `runs payloads`,
// which reads a body back from it; a URL naming no store digest can open is
// a usage error before anything is sent: exit 2, one line. What the store
// keeps, on S3 too, is eval's TestPayloadsGoToTheObjectStore.
func TestEvalPayloadsFlagAndVariable(t *testing.T) {
	ctx := context.Background()
	raw := "file://" + filepath.ToSlash(t.TempDir())
	h := newHarness(t)
	h.env["DIGEST_PAYLOADS"] = raw
	res := h.run(ctx, "eval", sums(t), "--models", "test:a", "-f", "json")
	delete(h.env, "DIGEST_PAYLOADS")
	bucket, err := payloads.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	var rep evalJSON
	if n, _, err := bucket.Count(ctx); res.code != 0 || json.Unmarshal([]byte(res.out), &rep) != nil || err != nil || n < 11 {
		t.Fatalf("exit %d, %d objects (%v): want the requests and answers there: %s", res.code, n, err, res.errOut)
	}
	res = h.run(ctx, "runs", "payloads", rep.RunID, "2", "--payloads", raw)
	var got runPayload
	if err := json.Unmarshal([]byte(res.out), &got); res.code != 0 || err != nil || got.RequestURI == "" || !strings.Contains(string(got.Request), "What is 3 + 1?") || got.Response == "" {
		t.Errorf("runs payloads: exit %d, %+v, %v: want the request and answer of line 2 from the store: %s", res.code, got, err, res.errOut)
	}
	oneLineError(t, h.run(ctx, "eval", sums(t), "--models", "test:a", "--payloads", "ftp://host/x"), 2, "payload store ftp://host/x")
}
