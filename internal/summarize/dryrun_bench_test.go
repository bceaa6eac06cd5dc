package summarize

import (
	"context"
	"os"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// BenchmarkDryRun prepares every commit of the repository named by
// DIGEST_BENCH_REPO as `digest summarize --dry-run` does. Profile it with
// -cpuprofile or -memprofile; .ci/bench-history compares the whole command
// with git.
func BenchmarkDryRun(b *testing.B) {
	repo := os.Getenv("DIGEST_BENCH_REPO")
	if repo == "" {
		b.Skip("DIGEST_BENCH_REPO names no repository")
	}
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		b.Fatal(err)
	}
	spec, _ := provider.ParseSpec(provider.Offline)
	for b.Loop() {
		res, err := Run(context.Background(), Options{
			Repos: []string{repo}, MaxDiffTokens: 4000, BatchSize: 8, DryRun: true,
			Target: target.Target{Spec: spec}, Tokenizer: tok,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Estimate.Commits), "commits")
	}
}
