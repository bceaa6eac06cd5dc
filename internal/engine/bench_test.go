package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
)

// BenchmarkLimitUse runs 600 requests through the engine and the real
// OpenAI client against the fake provider, limited to 120 requests (or
// 12,000 tokens) per 1 s window, a minute scaled down 60 times, and reports
// the share of the limit used in steady state and the share of requests
// answered 429:
//
//	go test ./internal/engine -run '^$' -bench LimitUse -benchtime 1x
//
// declared: the limit is given (--rpm / --tpm or the built-in table);
// headers: nothing is declared, the provider's rate-limit headers teach it;
// 429-only: nothing is declared and no headers are sent: only 429s and
// their Retry-After guide the engine.
func BenchmarkLimitUse(b *testing.B) {
	const window, rpm, tpm, n = time.Second, 120, 12_000, 600
	for _, sc := range []struct {
		name    string
		fake    fakeprovider.Config
		limits  engine.Limits
		prompt  int // words per prompt
		maxToks int
	}{
		{"declared-rpm", fakeprovider.Config{RPM: rpm, SendLimitHeaders: true, RetryAfter: true}, engine.Limits{RPM: rpm}, 10, 20},
		{"declared-tpm", fakeprovider.Config{TPM: tpm, SendLimitHeaders: true, RetryAfter: true}, engine.Limits{TPM: tpm}, 300, 20},
		{"headers-rpm", fakeprovider.Config{RPM: rpm, SendLimitHeaders: true, RetryAfter: true}, engine.Limits{}, 10, 20},
		{"429-only-rpm", fakeprovider.Config{RPM: rpm, RetryAfter: true}, engine.Limits{}, 10, 20},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for range b.N {
				cfg := sc.fake
				cfg.Window, cfg.Latency = window, 30*time.Millisecond
				srv := fakeprovider.Start(b, cfg)
				limits := sc.limits
				limits.Window = window
				e := &engine.Engine{Provider: openaiClient(srv, "k"), Concurrency: 32, SlowStart: true,
					Limits: limits, Tokens: srv.Estimate}
				tasks := make(chan engine.Task, n)
				for i := range n {
					tasks <- engine.Task{Key: fmt.Sprint(i), Request: provider.Request{Model: "m", MaxTokens: sc.maxToks,
						Messages: []provider.Message{{Role: "user", Content: strings.Repeat("word ", sc.prompt)}}}}
				}
				close(tasks)
				failed := 0
				if err := e.Run(context.Background(), tasks, func(o engine.Outcome) error {
					if o.Err != nil {
						failed++
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				st := srv.Stats()
				if failed > 0 || len(st.Admitted) != n {
					b.Fatalf("%d failed, %d admitted of %d", failed, len(st.Admitted), n)
				}
				// Steady state: from the end of the first window to the last
				// admission, against what the limit would admit in that time.
				used, byTokens := st.LimitUse(rpm, tpm, window)
				if sc.fake.TPM > 0 {
					used = byTokens
				}
				b.ReportMetric(100*used, "%limit-used")
				b.ReportMetric(100*float64(st.RateLimited)/float64(st.Requests), "%429")
			}
		})
	}
}
