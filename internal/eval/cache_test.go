package eval

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/stats"
)

// TestKeyFollowsTheServerAndTheSeed: the key is built from what is really
// sent. The same model at another server is asked anew, nothing served
// from the first server's answers, and the seed both reaches the provider
// and makes a key of its own.
func TestKeyFollowsTheServerAndTheSeed(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	var mu sync.Mutex
	var seeds []*int
	inner := r.models[0].Provider
	r.models[0].Provider = provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		mu.Lock()
		seeds = append(seeds, req.Seed)
		mu.Unlock()
		return inner.Complete(ctx, req)
	})
	r.models[0].BaseURL = "https://a.example/v1"
	r.run(t, sums(10), Options{Limit: 3})
	if n := r.calls[0].Load(); n != 3 {
		t.Fatalf("Limit 3 sent %d requests", n)
	}
	r.models[0].BaseURL = "https://b.example/v1"
	r.run(t, sums(10), Options{Limit: 3})
	if n := r.calls[0].Load(); n != 6 {
		t.Errorf("another server: %d requests in all, want 6 (nothing served from the first)", n)
	}
	seed := 42
	r.run(t, sums(10), Options{Limit: 3, Params: Params{Seed: &seed}})
	if n := r.calls[0].Load(); n != 9 {
		t.Errorf("a seed: %d requests in all, want 9 (a seed is a key of its own)", n)
	}
	for i, s := range seeds[min(6, len(seeds)):] {
		if s == nil || *s != 42 {
			t.Errorf("request %d after --seed 42 carried seed %v", 6+i, s)
		}
	}
}

// TestDuplicatePromptsArePaidOnce: the same prompt over and over, past one
// lookup batch and answered concurrently, is paid for once, and every
// duplicate shares its answer.
func TestDuplicatePromptsArePaidOnce(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	var b strings.Builder
	for i := range 2*lookupBatch + 88 {
		fmt.Fprintf(&b, `{"prompt": "What is %d+1?", "expected": "%d"}`+"\n", i%3, i%3+1)
	}
	_, e := r.run(t, b.String(), Options{Concurrency: 4, Scorer: &score.Scorer{Default: "numeric"}})
	if n := r.calls[0].Load(); n != 3 {
		t.Errorf("%d requests for 3 distinct prompts, want 3", n)
	}
	if m := e.Models[0]; m.Passed != 2*lookupBatch+88 {
		t.Errorf("%d of %d passed: every duplicate should share its answer", m.Passed, m.Items)
	}
}

// TestWhatIsSentDecidesWhatIsPaid: a failure is never kept, so the next
// run asks again; a repeat is asked anew beside the repeats already
// stored, and a new system prompt makes new keys.
func TestWhatIsSentDecidesWhatIsPaid(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	ok := r.models[0].Provider
	var failed atomic.Int64
	r.models[0].Provider = provider.Func(func(context.Context, provider.Request) (provider.Response, error) {
		failed.Add(1)
		return provider.Response{}, &provider.Error{Provider: "openai", Kind: provider.Permanent, StatusCode: 400, Message: "bad request"}
	})
	out, e := r.run(t, sums(10), Options{Limit: 2})
	if failed.Load() != 2 || e.Models[0].Errors != 2 || out.Items != 2 {
		t.Fatalf("every call failing: %d calls, %+v", failed.Load(), e.Models[0])
	}
	r.models[0].Provider = ok
	_, e = r.run(t, sums(10), Options{Limit: 2})
	if n := r.calls[0].Load(); n != 2 || e.Models[0].Cached != 0 || e.Models[0].Passed != 2 {
		t.Fatalf("after failures: %d requests, %+v; want 2 new ones (failures are never cached)", n, e.Models[0])
	}
	_, e = r.run(t, sums(10), Options{Limit: 2, Params: Params{Repeat: 3}})
	if n := r.calls[0].Load(); n != 6 || e.Models[0].Items != 6 || e.Models[0].Cached != 2 {
		t.Errorf("repeat 3: %d requests in all, %+v; want 6 (repeat 0 cached, 1 and 2 new)", n, e.Models[0])
	}
	r.run(t, sums(10), Options{Limit: 2, Params: Params{System: "Be brief."}})
	if n := r.calls[0].Load(); n != 8 {
		t.Errorf("a system prompt: %d requests in all, want 8", n)
	}
}

// TestBaseURLSpellingsShareOneCache: a trailing slash, localhost for
// 127.0.0.1 and an upper-case scheme name the same server, and pay
// nothing again.
func TestBaseURLSpellingsShareOneCache(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	base := "http://127.0.0.1:8080/v1"
	r.models[0].BaseURL = base
	r.run(t, sums(10), Options{})
	for _, spelling := range []string{base + "/", strings.Replace(base, "127.0.0.1", "localhost", 1), strings.Replace(base, "http://", "HTTP://", 1)} {
		r.models[0].BaseURL = spelling
		if _, e := r.run(t, sums(10), Options{}); e.Models[0].Cached != 10 {
			t.Errorf("base URL %s: %d cached, want every answer", spelling, e.Models[0].Cached)
		}
	}
	if n := r.calls[0].Load(); n != 10 {
		t.Errorf("%d requests after the first run, want none", n-10)
	}
}

// TestRerunReportsTheOriginalFigures: a rerun served from the store scores
// as the first run did and reports the answers' original latency, tokens
// and cost, each result marked cached; the models' figures (Wilson's
// interval, McNemar's p) are the same.
func TestRerunReportsTheOriginalFigures(t *testing.T) {
	r := newTestRun(t)
	_, first := r.run(t, sums(10), Options{})
	_, again := r.run(t, sums(10), Options{})
	for i := range first.Models {
		a, b := first.Models[i], again.Models[i]
		if b.Cached != 10 || a.Cached != 0 {
			t.Errorf("%s: %d cached first, %d on the rerun; want 0 and 10", a.Model, a.Cached, b.Cached)
		}
		b.Cached = a.Cached
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: rerun %+v, first %+v; want the same figures", a.Model, b, a)
		}
	}
	// The sloppy model is wrong on the 5 odd items: Wilson's 95% interval
	// of 5 of 10, and McNemar's p of 5 to 0, 2 × 0.5⁵.
	if lo, hi := stats.Wilson(5, 10); again.Models[1].CILow != lo || again.Models[1].CIHigh != hi || again.Models[1].Accuracy != 0.5 {
		t.Errorf("sloppy: %+v, want 5 of 10 with Wilson's interval", again.Models[1])
	}
	if p := again.Pairs[0]; p.AOnly != 5 || p.BOnly != 0 || p.P != 0.0625 {
		t.Errorf("pair %+v, want 5 to 0, p = 0.0625", p)
	}
}
