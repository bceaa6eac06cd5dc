package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/postgres"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// BenchmarkPruneRuns removes 27 of 30 runs of 30,000 result rows each
// (810,000 rows, about 300 B each) while another store writes an answer
// every 10 ms, and reports how fast rows go, the longest that writer
// waited, and, on SQLite, the file's size, what is free after the prune,
// and what VACUUM takes and leaves. PostgreSQL runs with
// DIGEST_TEST_POSTGRES set (.ci/postgres start DIR prints it).
//
//	go test ./internal/store/sqlstore -run '^$' -bench BenchmarkPruneRuns -benchtime 1x
func BenchmarkPruneRuns(b *testing.B) {
	const runs, rowsPerRun, keep = 30, 30000, 3
	backends := map[string]func(b *testing.B) (open func() (store.Store, error), path string){
		"sqlite": func(b *testing.B) (func() (store.Store, error), string) {
			path := filepath.Join(b.TempDir(), "digest.db")
			return func() (store.Store, error) { return sqlite.Open(context.Background(), path) }, path
		},
		"postgres": func(b *testing.B) (func() (store.Store, error), string) {
			if os.Getenv("DIGEST_TEST_POSTGRES") == "" {
				b.Skip("DIGEST_TEST_POSTGRES is not set")
			}
			url := pgtest.FreshDatabase(b)
			return func() (store.Store, error) { return postgres.Open(context.Background(), url) }, ""
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for range b.N {
				b.StopTimer()
				open, path := backends[name](b)
				s, err := open()
				if err != nil {
					b.Fatal(err)
				}
				writer, err := open()
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now().Add(-time.Duration(runs) * time.Hour)
				for r := range runs {
					id := fmt.Sprintf("run-%02d", r)
					if err := s.StartRun(ctx, store.EvalRun{ID: id, Dataset: "bench.jsonl", Models: []string{"openai:gpt-4o-mini"}, CreatedAt: start.Add(time.Duration(r) * time.Hour)}); err != nil {
						b.Fatal(err)
					}
					rrs := make([]store.RunResult, rowsPerRun)
					for i := range rrs {
						rrs[i] = store.RunResult{RunID: id, Model: "openai:gpt-4o-mini", Item: fmt.Sprintf("item-%05d", i), Line: i + 1,
							Key: fmt.Sprintf("%064x", i), Pass: i%3 != 0, Score: 1, Reasons: []string{"numeric: 42 = 42"}, Expected: []string{"42"}, Cached: r > 0}
					}
					if err := s.SaveRunResults(ctx, rrs); err != nil {
						b.Fatal(err)
					}
					if err := s.FinishRun(ctx, id, time.Now(), nil); err != nil {
						b.Fatal(err)
					}
				}
				var size int64
				if path != "" {
					size, _, _ = sqlite.Space(ctx, path)
				}
				// Another process's writes go on meanwhile.
				done := make(chan struct{})
				var wg sync.WaitGroup
				var longest time.Duration
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-done:
							return
						case <-time.After(10 * time.Millisecond):
						}
						t := time.Now()
						if err := writer.SaveEvalResult(ctx, store.EvalResult{Key: fmt.Sprintf("w%d", i), Model: "m", Request: []byte("q"), Answer: "a"}); err != nil {
							b.Error(err)
							return
						}
						longest = max(longest, time.Since(t))
					}
				})
				b.StartTimer()
				t := time.Now()
				p, err := s.PruneRuns(ctx, store.RunPrune{Keep: keep})
				took := time.Since(t)
				b.StopTimer()
				close(done)
				wg.Wait()
				if err != nil || len(p.IDs) != runs-keep || p.Results != (runs-keep)*rowsPerRun {
					b.Fatalf("pruned %d runs, %d rows, %v", len(p.IDs), p.Results, err)
				}
				b.ReportMetric(float64(p.Results)/took.Seconds(), "rows/s")
				b.ReportMetric(float64(longest.Milliseconds()), "ms-longest-write-wait")
				if path != "" {
					_, free, err := sqlite.Space(ctx, path)
					if err != nil {
						b.Fatal(err)
					}
					t := time.Now()
					if err := sqlite.Vacuum(ctx, path); err != nil {
						b.Fatal(err)
					}
					vacuumed := time.Since(t)
					after, _, _ := sqlite.Space(ctx, path)
					b.ReportMetric(float64(size)/1e6, "MB-before")
					b.ReportMetric(float64(free)/1e6, "MB-free-after")
					b.ReportMetric(vacuumed.Seconds(), "s-vacuum")
					b.ReportMetric(float64(after)/1e6, "MB-after-vacuum")
				}
				writer.Close()
				s.Close()
			}
		})
	}
}
