package fleetbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/pgtest"
)

// BenchmarkEvalOneProcessThroughLatency runs one real digest eval process
// at -j 16 against a fake provider that answers in 5 ms and allows any
// rate, its database a PostgreSQL server reached through a TCP proxy that
// adds 0, 5 or 10 ms to every round trip: how far one process is held to
// the database's round trip rather than to the provider. It reports the
// requests sent per second over the process's whole run, the seconds from
// the first request to the last (s-sending) and the rest of the run
// (s-else: start-up, and the reports read back); a request paid twice
// fails it. DIGEST_BENCH_ITEMS sets the items per case (1000):
//
//	go test ./internal/fleetbench -run '^$' -bench EvalOneProcessThroughLatency -benchtime 1x
func BenchmarkEvalOneProcessThroughLatency(b *testing.B) {
	items := 1000
	if s := os.Getenv("DIGEST_BENCH_ITEMS"); s != "" {
		var err error
		if items, err = strconv.Atoi(s); err != nil || items < 1 {
			b.Fatalf("DIGEST_BENCH_ITEMS=%q: want a positive number", s)
		}
	}
	bin := buildDigest(b)
	for _, rtt := range []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt-%s", rtt), func(b *testing.B) {
			for range b.N {
				db := pgtest.Proxied(b, pgtest.FreshDatabase(b), rtt)
				var mu sync.Mutex
				var first, last time.Time
				srv := fakeprovider.Start(b, fakeprovider.Config{Window: time.Second, Latency: 5 * time.Millisecond, Answer: func(req fakeprovider.Received) string {
					mu.Lock()
					if first.IsZero() {
						first = time.Now()
					}
					last = time.Now()
					mu.Unlock()
					return fakeprovider.DefaultAnswer(req)
				}})
				var lines strings.Builder
				for i := range items {
					fmt.Fprintf(&lines, `{"id": "q%d", "prompt": "q%d: what is %d + 1?", "expected": "%d"}`+"\n", i, i, i, i+1)
				}
				data := filepath.Join(b.TempDir(), "items.jsonl")
				if err := os.WriteFile(data, []byte(lines.String()), 0o600); err != nil {
					b.Fatal(err)
				}
				cmd := exec.CommandContext(context.Background(), bin, "--db", db, "--quiet", "eval", data, "--models", "openai:m",
					"--base-url", srv.OpenAIBaseURL(), "-j", "16", "-f", "json", "-o", os.DevNull)
				cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-bench")
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("digest eval: %v\n%s", err, out)
				}
				elapsed := time.Since(start)
				st := srv.Stats()
				if st.Succeeded < items {
					b.Fatalf("%d answers for %d items", st.Succeeded, items)
				}
				b.ReportMetric(float64(st.Succeeded)/elapsed.Seconds(), "requests/s")
				b.ReportMetric(last.Sub(first).Seconds(), "s-sending")
				b.ReportMetric(elapsed.Seconds()-last.Sub(first).Seconds(), "s-else")
				if st.Requests != items {
					b.Fatalf("%d requests for %d items: some were paid twice", st.Requests, items)
				}
			}
		})
	}
}
