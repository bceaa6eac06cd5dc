package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/postgres"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// BenchmarkRunResults writes the rows of a run of 10,000 results, in
// writes of 500 as eval makes them, then reads them back as a report does
// (RunRows, without bodies) and ranks the run (RunTotals): with no named
// metric, and with three per result (each a row of eval_result_metrics).
// It reports the milliseconds of each. PostgreSQL runs with
// DIGEST_TEST_POSTGRES set.
//
//	go test ./internal/store/sqlstore -run '^$' -bench BenchmarkRunResults -benchtime 3x
func BenchmarkRunResults(b *testing.B) {
	const results = 10000
	backends := map[string]func(b *testing.B) (store.Store, error){
		"sqlite": func(b *testing.B) (store.Store, error) {
			return sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "digest.db"))
		},
		"postgres": func(b *testing.B) (store.Store, error) {
			if os.Getenv("DIGEST_TEST_POSTGRES") == "" {
				b.Skip("DIGEST_TEST_POSTGRES is not set")
			}
			return postgres.Open(context.Background(), pgtest.FreshDatabase(b))
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		for _, graded := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/metrics=%v", name, graded), func(b *testing.B) {
				ctx := context.Background()
				var save, read time.Duration
				for range b.N {
					b.StopTimer()
					s, err := backends[name](b)
					if err != nil {
						b.Fatal(err)
					}
					if err := s.StartRun(ctx, store.EvalRun{ID: "run", Dataset: "d", Models: []string{"m"}, CreatedAt: time.Now()}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					began := time.Now()
					for start := 0; start < results; start += 500 {
						var rows []store.RunResult
						for line := start + 1; line <= start+500; line++ {
							rr := store.RunResult{RunID: "run", Model: "m", Item: fmt.Sprint(line), Line: line, Key: fmt.Sprint("k", line), Pass: line%3 > 0, Score: float64(line%4) / 4}
							if graded {
								rr.Metrics = []store.MetricScore{{Name: "accuracy", Pass: true, Score: 1}, {Name: "bias", Pass: line%2 == 0, Score: 0.5}, {Name: "tone", Score: 0.25}}
							}
							rows = append(rows, rr)
						}
						if err := s.SaveEval(ctx, store.EvalWrite{Rows: rows}); err != nil {
							b.Fatal(err)
						}
					}
					save += time.Since(began)
					began = time.Now()
					n := 0
					for _, err := range s.RunRows(ctx, "run", []string{"m"}, false) {
						if err != nil {
							b.Fatal(err)
						}
						n++
					}
					if _, err := s.RunTotals(ctx, "run", "m"); err != nil || n != results {
						b.Fatalf("read %d rows, want %d: %v", n, results, err)
					}
					read += time.Since(began)
					b.StopTimer()
					s.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(save.Milliseconds())/float64(b.N), "save-ms")
				b.ReportMetric(float64(read.Milliseconds())/float64(b.N), "read-ms")
			})
		}
	}
}
