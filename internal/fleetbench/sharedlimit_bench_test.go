package fleetbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/pgtest"
)

// BenchmarkSharedLimitProcesses runs 1, 2 and 4 real digest eval
// processes on one API key, each with --rpm 600, against the fake
// provider's sliding window of 600 requests per minute, sharing the limit
// through an SQLite file and through PostgreSQL (when DIGEST_TEST_POSTGRES
// names a server). It reports the share of the limit used after the first
// minute and the share of requests answered 429. Each case sends 900
// requests, about a minute and a half:
//
//	go test ./internal/fleetbench -run '^$' -bench SharedLimitProcesses -benchtime 1x -timeout 30m
func BenchmarkSharedLimitProcesses(b *testing.B) {
	const window, rpm, total = time.Minute, 600, 900
	bin := buildDigest(b)
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, procs := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s-%dproc", backend, procs), func(b *testing.B) {
				for range b.N {
					db := filepath.Join(b.TempDir(), "digest.db")
					if backend == "postgres" {
						db = pgtest.FreshDatabase(b)
					}
					srv := fakeprovider.Start(b, fakeprovider.Config{Window: window, RPM: rpm, SendLimitHeaders: true, RetryAfter: true, Latency: 30 * time.Millisecond})
					var wg sync.WaitGroup
					for p := range procs {
						data := filepath.Join(b.TempDir(), "items.jsonl")
						// Each item has an answer to check: eval refuses a
						// dataset with nothing to check, sending nothing.
						var lines strings.Builder
						for i := range total / procs {
							fmt.Fprintf(&lines, `{"id": "p%d-%d", "prompt": "Question %d of process %d", "expected": "%d"}`+"\n", p, i, i, p, i)
						}
						if err := os.WriteFile(data, []byte(lines.String()), 0o600); err != nil {
							b.Fatal(err)
						}
						cmd := exec.CommandContext(context.Background(), bin, "--db", db, "--quiet", "eval", data,
							"--models", "openai:gpt-test", "--base-url", srv.OpenAIBaseURL(), "--rpm", fmt.Sprint(rpm), "-f", "json", "-o", os.DevNull)
						cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-bench-shared")
						wg.Go(func() {
							if out, err := cmd.CombinedOutput(); err != nil {
								b.Errorf("process %d: %v: %s", p, err, out)
							}
						})
					}
					wg.Wait()
					st := srv.Stats()
					if len(st.Admitted) < total-procs {
						b.Fatalf("%d admitted of %d", len(st.Admitted), total)
					}
					used, _ := st.LimitUse(rpm, 0, window)
					b.ReportMetric(100*used, "%limit-used")
					b.ReportMetric(100*float64(st.RateLimited)/float64(st.Requests), "%429")
				}
			})
		}
	}
}
