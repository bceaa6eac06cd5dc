package target_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/calibrate"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// heavier is a tokenizer that counts 40% more than o200k, as some
// models' do.
func heavier(tb testing.TB) (o200k, model func(string) int) {
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		tb.Fatal(err)
	}
	return tok.Count, func(s string) int { return int(math.Ceil(1.4 * float64(tok.Count(s)))) }
}

func question(i int) provider.Request {
	return provider.Request{Model: "my-model", MaxTokens: 20, Messages: []provider.Message{{Role: "user",
		Content: fmt.Sprintf("Question %d. %s", i, strings.Repeat("Weigh every clause of the contract before you answer. ", 60))}}}
}

// The factor a target counts with is learned from the input tokens the
// provider reports: against a server whose tokenizer counts 40% more than
// o200k, a model digest has no factor for learns about 1.4, and counts
// its next prompts with it.
func TestFactorIsLearnedFromReportedUsage(t *testing.T) {
	o200k, model := heavier(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{CountTokens: model})
	spec := provider.Spec{Provider: "openai", Model: "my-model"}
	tg := target.Target{Spec: spec, Rules: provider.ProviderRules(spec),
		Provider: openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})}
	if err := tg.Learn(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	before := tg.InputTokens(o200k, question(0))
	eng := tg.Engine(target.Setup{Concurrency: 2, Count: o200k})
	for i := range calibrate.MinSamples {
		if o := eng.Do(context.Background(), engine.Task{Key: fmt.Sprint(i), Request: question(i)}); o.Err != nil {
			t.Fatal(o.Err)
		}
	}
	if f := tg.Factor.Factor(); math.Abs(f-1.4) > 0.02 {
		t.Errorf("learned factor %v, want about 1.4", f)
	}
	after := tg.InputTokens(o200k, question(0))
	if float64(after) < 1.38*float64(before) {
		t.Errorf("a prompt counts %d tokens after learning, %d before", after, before)
	}
	if f, n := tg.Factor.Learned(); n != calibrate.MinSamples || math.Abs(f-1.4) > 0.02 {
		t.Errorf("learned %v over %d to save", f, n)
	}
}

// BenchmarkTokenFactorAgainstATokensLimit sends 80 requests, 16 at a
// time, to a fake whose tokenizer counts 40% more than o200k, under a
// limit of 12,000 tokens a second that the fake enforces by its own count
// (as a sliding window, and as the token bucket the providers document),
// with no rate-limit headers to learn from, paced by o200k alone and by
// the factor an earlier run learned. It reports the share of 429s.
//
//	go test ./internal/target -run '^$' -bench TokenFactor -benchtime 1x
func BenchmarkTokenFactorAgainstATokensLimit(b *testing.B) {
	const requests, tpm = 80, 12000
	o200k, model := heavier(b)
	for _, c := range []struct {
		name    string
		limiter fakeprovider.Limiter
		learned bool
	}{{"sliding-window/o200k-only", fakeprovider.SlidingWindow, false}, {"sliding-window/learned", fakeprovider.SlidingWindow, true},
		{"token-bucket/o200k-only", fakeprovider.TokenBucket, false}, {"token-bucket/learned", fakeprovider.TokenBucket, true}} {
		learned := c.learned
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				srv := fakeprovider.Start(b, fakeprovider.Config{CountTokens: model, Window: time.Second, TPM: tpm, RetryAfter: true, Limiter: c.limiter})
				spec := provider.Spec{Provider: "openai", Model: "my-model"}
				tg := target.Target{Spec: spec, Rules: provider.ProviderRules(spec), Limits: engine.Limits{TPM: tpm, Window: time.Second},
					Provider: openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})}
				if learned {
					tg.Factor = calibrate.New(1.4, 100, 1) // as a first run leaves it
				}
				eng := tg.Engine(target.Setup{Concurrency: 16, Count: o200k})
				var wg sync.WaitGroup
				for i := range requests {
					wg.Go(func() {
						if o := eng.Do(context.Background(), engine.Task{Key: fmt.Sprint(i), Request: question(i)}); o.Err != nil {
							b.Error(o.Err)
						}
					})
				}
				wg.Wait()
				st := srv.Stats()
				b.ReportMetric(100*float64(st.RateLimited)/float64(st.Requests), "%429")
			}
		})
	}
}
