package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// These tests run the engine with the real wire-format clients against
// the fake provider: limits, headers, 429s, faults and hangs as a real
// provider sends them, in windows scaled down from a minute.

func openaiClient(srv *fakeprovider.Server, key string) provider.Provider {
	return openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: key, KeyEnv: "OPENAI_API_KEY", HTTPClient: srv.Client()})
}

func prompts(n int) []engine.Task {
	out := make([]engine.Task, n)
	for i := range out {
		out[i] = engine.Task{Key: fmt.Sprint(i), Request: provider.Request{
			Model: "gpt-test", MaxTokens: 20,
			Messages: []provider.Message{{Role: "user", Content: fmt.Sprintf("prompt %d: %s", i, strings.Repeat("word ", 20))}},
		}}
	}
	return out
}

// runTasks sends tasks and returns every committed outcome.
func runTasks(t *testing.T, e *engine.Engine, tasks []engine.Task) ([]engine.Outcome, error) {
	t.Helper()
	ch := make(chan engine.Task, len(tasks))
	for _, task := range tasks {
		ch <- task
	}
	close(ch)
	var got []engine.Outcome
	errc := start(context.Background(), e, ch, func(o engine.Outcome) error {
		got = append(got, o)
		return nil
	})
	return got, wait(t, errc, "Run")
}

func TestDeclaredLimitIsNeverExceeded(t *testing.T) {
	const window = 400 * time.Millisecond
	cfg := fakeprovider.Config{Window: window, RPM: 10, TPM: 1500, SendLimitHeaders: true, RetryAfter: true}
	srv := fakeprovider.Start(t, cfg)
	e := &engine.Engine{Provider: openaiClient(srv, "k"), Concurrency: 8, SlowStart: true,
		Limits: engine.Limits{RPM: cfg.RPM, TPM: cfg.TPM, Window: window}, Tokens: srv.Estimate}
	got, err := runTasks(t, e, prompts(40))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range got {
		if o.Err != nil {
			t.Errorf("%s: %v", o.Task.Key, o.Err)
		}
	}
	st := srv.Stats()
	if len(got) != 40 || st.RateLimited != 0 {
		t.Errorf("%d outcomes, %d requests beyond the limit (429), want 40 and none", len(got), st.RateLimited)
	}
	if st.MaxRequestsInWindow > cfg.RPM || st.MaxTokensInWindow > cfg.TPM {
		t.Errorf("a window held %d requests and %d tokens, limits %d and %d", st.MaxRequestsInWindow, st.MaxTokensInWindow, cfg.RPM, cfg.TPM)
	}
}

// Without declared limits the engine finds them: the fake's 429s pause the
// whole model, its headers teach the limit, and every item completes with
// few 429s rather than a storm.
func TestUndeclaredLimitIsLearnedFrom429sAndHeaders(t *testing.T) {
	const window = 300 * time.Millisecond
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: window, RPM: 8, SendLimitHeaders: true, RetryAfter: true})
	e := &engine.Engine{Provider: openaiClient(srv, "k"), Concurrency: 8, SlowStart: true,
		Limits: engine.Limits{Window: window}, Tokens: srv.Estimate}
	got, err := runTasks(t, e, prompts(40))
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, o := range got {
		if o.Err != nil {
			failed++
		}
	}
	st := srv.Stats()
	if len(got) != 40 || failed != 0 {
		t.Fatalf("%d outcomes, %d failed", len(got), failed)
	}
	if st.RateLimited > 8 {
		t.Errorf("%d 429s for 40 requests: the engine keeps hitting the limit", st.RateLimited)
	}
	if e.Stats().RateLimited != int64(st.RateLimited) {
		t.Errorf("engine counted %d 429s, the server sent %d", e.Stats().RateLimited, st.RateLimited)
	}
}

func TestBadKeyFailsFastWithOneRequest(t *testing.T) {
	for _, wire := range []string{"openai", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "right"})
			var p provider.Provider = openaiClient(srv, "sk-wrong-key-0123456789")
			env := "OPENAI_API_KEY"
			if wire == "anthropic" {
				p = anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-wrong-key-0123456789", HTTPClient: srv.Client()})
				env = "ANTHROPIC_API_KEY"
			}
			e := &engine.Engine{Provider: p, Concurrency: 8, SlowStart: true}
			began := time.Now()
			got, err := runTasks(t, e, prompts(30))
			var fatal *engine.FatalError
			if !errors.As(err, &fatal) || !strings.Contains(err.Error(), env) {
				t.Fatalf("Run = %v, want a fatal error naming %s", err, env)
			}
			if strings.Contains(err.Error(), "sk-wrong-key") {
				t.Errorf("the error shows the key: %v", err)
			}
			if n := srv.Stats().Requests; n != 1 || len(got) != 0 {
				t.Errorf("%d requests sent, %d outcomes committed; want 1 and 0", n, len(got))
			}
			if d := time.Since(began); d > time.Second {
				t.Errorf("took %s to stop", d)
			}
		})
	}
}

// Every item completes when a tenth of the requests fail: 500s, 503/529s,
// bodies cut in half and hangs that only the per-attempt timeout ends.
func TestEveryItemCompletesUnderInjectedFaults(t *testing.T) {
	for _, wire := range []string{"openai", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Faults: fakeprovider.FaultConfig{
				Status500: 0.03, Status5xx: 0.03, Malformed200: 0.03, Hang: 0.01, Seed: 7}})
			var p provider.Provider = openaiClient(srv, "k")
			if wire == "anthropic" {
				p = anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "k", HTTPClient: srv.Client()})
			}
			e := &engine.Engine{Provider: p, Concurrency: 6, Timeout: 300 * time.Millisecond,
				BackoffBase: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond}
			got, err := runTasks(t, e, prompts(150))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range got {
				if o.Err != nil {
					t.Errorf("%s failed: %v", o.Task.Key, o.Err)
				}
			}
			st := srv.Stats()
			faults := st.ServerErrors + st.Malformed + st.Hung
			if len(got) != 150 || faults == 0 || e.Stats().Retries < int64(faults) {
				t.Errorf("%d outcomes; %d faults injected, %d retries", len(got), faults, e.Stats().Retries)
			}
		})
	}
}
