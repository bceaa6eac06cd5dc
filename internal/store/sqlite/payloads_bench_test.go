package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/store"
)

// BenchmarkPayloads stores N results (DIGEST_BENCH_RESULTS, default 10,000)
// of a typical eval, a 3 KB request (a 2 KB system prompt all share, a 1 KB
// user message) and a 300-byte answer each, with the bodies in the database
// and with them in an object store (--payloads: DIGEST_TEST_S3 when set,
// else a directory), and reports the database's bytes per stored result and
// how long a cached rerun of the N takes: the lookups of their answers and
// the rows of the new run.
//
//	go test -run '^$' -bench BenchmarkPayloads -benchtime 1x ./internal/store/sqlite
func BenchmarkPayloads(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("DIGEST_BENCH_RESULTS")); err == nil && v > 0 {
		n = v
	}
	// Text as varied as prose or code: words drawn from a vocabulary, so
	// that gzip does to it what it does to a real prompt.
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the a of to in is for on that with as this change adds fixes removes function value error test file path commit user request response model token cache store run item line score pass fail return if else nil err ctx map slice string int key hash body config option flag default")
	text := func(n int) string {
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(" \n"[rng.IntN(8)/7])
		}
		return sb.String()
	}
	system := text(2000)
	var answers []store.EvalResult
	for i := range n {
		answers = append(answers, store.EvalResult{Key: fmt.Sprintf("key-%08d", i), Model: "openai:gpt-4o-mini", LatencyMS: 812,
			InputTokens: 900, OutputTokens: 60, CostUSD: 0.0002,
			Request: fmt.Appendf(nil, `{"Model":"gpt-4o-mini","System":%q,"Messages":[{"Role":"user","Content":%q}]}`, system, text(1000)),
			Answer:  text(300)})
	}
	for _, mode := range []string{"database", "object-store"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				ctx := context.Background()
				dir := b.TempDir()
				path := filepath.Join(dir, "digest.db")
				s, err := Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				if mode == "object-store" {
					raw := "file://" + filepath.ToSlash(filepath.Join(dir, "bucket"))
					if s3 := os.Getenv("DIGEST_TEST_S3"); s3 != "" {
						raw = strings.Replace(s3, "?", fmt.Sprintf("/bench-%d?", time.Now().UnixNano()), 1)
					} else if err := os.Mkdir(filepath.Join(dir, "bucket"), 0o755); err != nil {
						b.Fatal(err)
					}
					bucket, err := payloads.Open(ctx, raw)
					if err != nil {
						b.Fatal(err)
					}
					s.UsePayloads(bucket)
				}
				before := fileBytes(b, path)
				for start := 0; start < n; start += 200 {
					if err := s.SaveEval(ctx, store.EvalWrite{Answers: answers[start:min(start+200, n)]}); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := s.SQL().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(fileBytes(b, path)-before)/float64(n), "dbB/result")

				// A cached rerun: every answer is looked up and found, and
				// the new run's rows are written, in batches as eval does.
				began := time.Now()
				if err := s.StartRun(ctx, store.EvalRun{ID: "rerun", Dataset: "d", Models: []string{"openai:gpt-4o-mini"}, CreatedAt: began}); err != nil {
					b.Fatal(err)
				}
				for start := 0; start < n; start += 500 {
					keys := make([]string, 0, 500)
					var rows []store.RunResult
					for _, a := range answers[start:min(start+500, n)] {
						keys = append(keys, a.Key)
						rows = append(rows, store.RunResult{RunID: "rerun", Model: a.Model, Item: a.Key, Line: len(rows) + start + 1, Key: a.Key, Pass: true, Score: 1, Cached: true})
					}
					found, err := s.EvalResults(ctx, keys)
					if err != nil || len(found) != len(keys) {
						b.Fatalf("found %d of %d: %v", len(found), len(keys), err)
					}
					if err := s.SaveEval(ctx, store.EvalWrite{Rows: rows}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(time.Since(began).Seconds(), "rerun-s")
				s.Close()
			}
		})
	}
}

// fileBytes is the size of the database with its WAL.
func fileBytes(b *testing.B, path string) int64 {
	var total int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			total += fi.Size()
		}
	}
	return total
}
