package sharedlimit_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/postgres"
)

// BenchmarkSharedLimitUse runs 1, 2 and 4 engines, each with a store
// connection of its own as a process would have, on one API key against
// the fake provider's sliding window of 600 requests per 3 s (a minute
// scaled down 20 times), every engine declaring the full limit. It reports
// the share of the limit used in steady state and the share of requests
// answered 429, with the limit shared through SQLite, through PostgreSQL
// (when DIGEST_TEST_POSTGRES names a server), and unshared for comparison.
// Two engines also run with nothing declared: the limit told by the
// headers (-headers), or by nothing but 429s and Retry-After (-429only).
//
//	go test ./internal/sharedlimit -run '^$' -bench SharedLimitUse -benchtime 1x
func BenchmarkSharedLimitUse(b *testing.B) {
	backends := []struct {
		name  string
		fresh func(b *testing.B) func() store.Store // nil: unshared
	}{
		{"unshared", nil},
		{"sqlite", func(b *testing.B) func() store.Store {
			path := filepath.Join(b.TempDir(), "digest.db")
			return func() store.Store { return openStore(b, path) }
		}},
		{"postgres", func(b *testing.B) func() store.Store {
			url := pgtest.FreshDatabase(b)
			return func() store.Store {
				s, err := postgres.Open(context.Background(), url)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				return s
			}
		}},
	}
	for _, be := range backends {
		for _, procs := range []int{1, 2, 4} {
			if be.fresh == nil && procs == 1 {
				continue
			}
			modes := []limitMode{{"", true, true}}
			if procs == 2 {
				modes = append(modes, limitMode{"-headers", false, true}, limitMode{"-429only", false, false})
			}
			for _, m := range modes {
				b.Run(fmt.Sprintf("%s-%dproc%s", be.name, procs, m.suffix), func(b *testing.B) {
					for range b.N {
						var open func() store.Store
						if be.fresh != nil {
							open = be.fresh(b)
						}
						measureUse(b, open, procs, m)
					}
				})
			}
		}
	}
}

// limitMode is how the engines learn the limit: declared, or from the
// provider's headers, or from 429s alone when neither.
type limitMode struct {
	suffix            string
	declared, headers bool
}

func measureUse(b *testing.B, open func() store.Store, procs int, m limitMode) {
	const window, rpm, total = 3 * time.Second, 600, 2400
	srv := fakeprovider.Start(b, fakeprovider.Config{Window: window, RPM: rpm, SendLimitHeaders: m.headers, RetryAfter: true, Latency: 30 * time.Millisecond})
	name := sharedlimit.Name("openai", srv.OpenAIBaseURL(), "gpt-test", "k")
	limits := engine.Limits{Window: window}
	if m.declared {
		limits.RPM = rpm
	}
	n := total / procs
	var wg sync.WaitGroup
	for p := range procs {
		e := &engine.Engine{Provider: client(srv), Concurrency: 32, SlowStart: true, Limits: limits, Tokens: srv.Estimate}
		if open != nil {
			e.Shared = sharedlimit.Limit{Store: open(), Name: name}
		}
		wg.Go(func() {
			if err := e.Run(context.Background(), tasks(n, fmt.Sprint(p, "-")), func(o engine.Outcome) error { return o.Err }); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	st := srv.Stats()
	if len(st.Admitted) != n*procs {
		b.Fatalf("%d admitted of %d", len(st.Admitted), n*procs)
	}
	// Steady state: from the end of the first window to the last admission.
	used, _ := st.LimitUse(rpm, 0, window)
	b.ReportMetric(100*used, "%limit-used")
	b.ReportMetric(100*float64(st.RateLimited)/float64(st.Requests), "%429")
}
