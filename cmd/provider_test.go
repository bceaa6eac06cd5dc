package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestSummarizeThroughTheOpenAIWireFormat runs the real client against the
// fake provider: batches answered shuffled and with a commit left out,
// usage and cost recorded, and the key never written anywhere.
func TestSummarizeThroughTheOpenAIWireFormat(t *testing.T) {
	const key = "sk-proj-digest-test-key-9f8e7d6c5b4a"
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: key, ShuffleBatch: true, DropOne: true, SendLimitHeaders: true, RPM: 1000})
	f := fixture(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = key
	out := filepath.Join(t.TempDir(), "changes.jsonl")
	res := h.run(context.Background(), "--verbose", "summarize", f.Dir, "--model", "openai:gpt-4o-mini",
		"--base-url", srv.OpenAIBaseURL(), "--batch-size", "3", "-f", "jsonl", "-o", out)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, string(data))
	if len(got) != 8 {
		t.Fatalf("%d entries, want 8", len(got))
	}
	for _, e := range got {
		hash, subject := e["commit"].(string), e["subject"].(string)
		if want := "Summary of " + hash[:12] + ": " + subject; e["summary"] != want {
			t.Errorf("commit %s got %q, want %q", hash[:7], e["summary"], want)
		}
		if e["model"] != "openai:gpt-4o-mini" || e["input_tokens"].(float64) <= 0 || e["cost_usd"].(float64) <= 0 {
			t.Errorf("entry %s: model %v, %v input tokens, $%v", hash[:7], e["model"], e["input_tokens"], e["cost_usd"])
		}
	}
	// 3 batches of 3, 3 and 2; each answer leaves one out, asked again alone.
	if n := srv.Stats().Requests; n != 6 {
		t.Errorf("%d requests, want 6", n)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+key {
			t.Errorf("request without the key: %v", r.Header)
		}
	}
	dbBytes, _ := os.ReadFile(h.db)
	wal, _ := os.ReadFile(h.db + "-wal")
	for name, b := range map[string]string{"stdout": res.out, "stderr": res.errOut, "report": string(data), "database": string(dbBytes) + string(wal)} {
		if strings.Contains(b, key) || strings.Contains(b, key[8:]) {
			t.Errorf("the API key appears in the %s", name)
		}
	}
}

func TestHostedModelWithoutKeyNamesTheVariable(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	for model, env := range map[string]string{"openai:gpt-4o-mini": "OPENAI_API_KEY", "anthropic:claude-haiku-4-5": "ANTHROPIC_API_KEY"} {
		res := h.run(context.Background(), "summarize", f.Dir, "--model", model)
		if res.code != 2 || !strings.Contains(res.errOut, "needs an API key in "+env) || !strings.Contains(res.errOut, "Try: export "+env) {
			t.Errorf("%s: exit %d, %q", model, res.code, res.errOut)
		}
	}
}

func TestBadKeyStopsTheRunAndNamesTheVariable(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "right"})
	f := fixture(t)
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-wrong"
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "anthropic:claude-haiku-4-5", "--base-url", srv.AnthropicBaseURL(), "--batch-size", "1")
	if res.code != 1 || !strings.Contains(res.errOut, "ANTHROPIC_API_KEY") || strings.Contains(res.errOut, "sk-ant-wrong") {
		t.Errorf("exit %d: %q", res.code, res.errOut)
	}
	if n := srv.Stats().Requests; n != 1 {
		t.Errorf("%d requests with a bad key, want 1", n)
	}
	if lines := strings.Count(strings.TrimSpace(res.errOut), "\n"); lines != 0 {
		t.Errorf("%d lines of error, want one: %q", lines+1, res.errOut)
	}
}
