package eval

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/target"
)

// TestInterruptKeepsAnswersAndResumes: a run stopped mid-way keeps the
// answers it was given, is left unfinished so that its report is not
// taken for the whole, and the next run asks only for the rest.
func TestInterruptKeepsAnswersAndResumes(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	ok := r.models[0].Provider
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var answers atomic.Int64
	r.models[0].Provider = provider.Func(func(c context.Context, req provider.Request) (provider.Response, error) {
		if answers.Add(1) > 4 {
			// The fifth is given up on: the run stops while it is asked.
			cancel()
			return provider.Response{}, context.Canceled
		}
		return ok.Complete(c, req)
	})
	o := Options{Dataset: "sums.jsonl", Source: strings.NewReader(sums(10)), Models: r.models, Tokenizer: r.tok, Store: r.st,
		Concurrency: 1, Scorer: &score.Scorer{}}
	out, err := Run(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want it stopped by the cancel", err)
	}
	run, found, err := r.st.Run(context.Background(), out.RunID)
	if err != nil || !found || !run.FinishedAt.IsZero() {
		t.Fatalf("the interrupted run %s: found %v, finished %v, %v; want it kept unfinished", out.RunID, found, run.FinishedAt, err)
	}
	if e, err := Report(context.Background(), r.st, run, nil); err != nil || e.Models[0].Items != 4 {
		t.Fatalf("the interrupted run's report: %v, %v; want the 4 answers given", e, err)
	}
	r.models[0].Provider = ok
	_, e := r.run(t, sums(10), Options{})
	if n := r.calls[0].Load(); n != 10 || e.Models[0].Cached != 4 || e.Models[0].Passed != 10 {
		t.Errorf("resume: %d answers paid in all, %+v; want 10, 4 of them cached", n, e.Models[0])
	}
	runs, _ := r.st.Runs(context.Background())
	if len(runs) != 2 || runs[0].FinishedAt.IsZero() == runs[1].FinishedAt.IsZero() {
		t.Errorf("runs %+v: want the resumed one finished, the interrupted one not", runs)
	}
}

// TestFatalErrorStopsEveryModel: a fatal error on one model (a refused
// key) stops the run with that error, not as an interrupt, though the
// other model was answering.
func TestFatalErrorStopsEveryModel(t *testing.T) {
	r := newTestRun(t)
	r.models[0].Provider = provider.Func(func(context.Context, provider.Request) (provider.Response, error) {
		return provider.Response{}, &provider.Error{Provider: "openai", Kind: provider.Fatal, StatusCode: 401, Message: "invalid key", Hint: "Try: export OPENAI_API_KEY=..."}
	})
	_, err := Run(context.Background(), Options{Dataset: "sums.jsonl", Source: strings.NewReader(sums(10)), Models: r.models,
		Tokenizer: r.tok, Store: r.st, Concurrency: 2, Scorer: &score.Scorer{}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.StatusCode != 401 || errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want the 401 itself", err)
	}
}

// TestDailyQuotaStopsTheRunAtOnce: a 429 asking, on the wire, to wait a
// day (a daily quota) stops the run at once with one line saying so,
// instead of a silent 24 h wait; the answer that arrived is kept.
func TestDailyQuotaStopsTheRunAtOnce(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) > 1 {
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached for requests per day (RPD)","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"0"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}))
	t.Cleanup(srv.Close)
	r := newTestRun(t)
	m := r.models[0]
	m.Spec.Model, m.BaseURL = "strong", srv.URL+"/v1"
	m.Provider = openai.New(openai.Options{BaseURL: m.BaseURL, APIKey: "sk-test"})
	start := time.Now()
	_, err := Run(context.Background(), Options{Dataset: "sums.jsonl", Source: strings.NewReader(sums(10)), Models: []target.Target{m},
		Tokenizer: r.tok, Store: r.st, Concurrency: 1, Scorer: &score.Scorer{}})
	if err == nil || !strings.Contains(err.Error(), "openai:strong") || !strings.Contains(err.Error(), "asks to wait 24h0m") ||
		!strings.Contains(err.Error(), "quota") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run = %v; want one line naming the model, the day's wait and the quota", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopped after %v, not at once", d)
	}
	runs, err := r.st.Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v; want the one holding the answer that arrived", runs, err)
	}
	if e, err := Report(context.Background(), r.st, runs[0], nil); err != nil || e.Models[0].Items != 1 {
		t.Errorf("report %v, %v; want the 1 answer that arrived", e, err)
	}
}

// TestRunStoppedBeforeAnyResultIsDropped: a run stopped by a fatal error
// before any result was stored (a refused key on the first request) is
// dropped from the store: kept, its reports would be empty ones that a
// CI test view shows as a pass.
func TestRunStoppedBeforeAnyResultIsDropped(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	r.models[0].Provider = provider.Func(func(context.Context, provider.Request) (provider.Response, error) {
		return provider.Response{}, &provider.Error{Provider: "openai", Kind: provider.Fatal, StatusCode: 401, Message: "invalid key"}
	})
	out, err := Run(context.Background(), Options{Dataset: "sums.jsonl", Source: strings.NewReader(sums(10)), Models: r.models,
		Tokenizer: r.tok, Store: r.st, Concurrency: 1, Scorer: &score.Scorer{}})
	if err == nil {
		t.Fatal("a refused key ran to the end")
	}
	if _, found, err := r.st.Run(context.Background(), out.RunID); found || err != nil {
		t.Errorf("run %s with no result: found %v, %v; want it dropped", out.RunID, found, err)
	}
	if runs, _ := r.st.Runs(context.Background()); len(runs) != 0 {
		t.Errorf("%d runs kept, want none", len(runs))
	}
}
