package summarize

import (
	"context"

	"github.com/digest-cli/digest/internal/prompt"
)

// Estimate is what a run would send, counted without sending it.
type Estimate struct {
	Commits         int     `json:"commits"` // commits to summarize (not cached)
	Requests        int     `json:"requests"`
	InputTokens     int     `json:"input_tokens"`
	MaxOutputTokens int     `json:"max_output_tokens"`
	Failed          int     `json:"failed"`   // commits whose diff could not be read
	CostUSD         float64 `json:"cost_usd"` // input at list price plus every output token allowed

	// Highlights counts the sections whose highlights would be asked for
	// (one request each, in Requests); HighlightsStored those stored.
	Highlights       int `json:"highlights,omitempty"`
	HighlightsStored int `json:"highlights_stored,omitempty"`
}

// estimate prepares every miss and adds to est the requests a run would
// send, batched by size and token budget as the run would batch them.
func estimate(ctx context.Context, opts Options, misses <-chan *pending, est *Estimate) {
	system := opts.Tokenizer.Count(prompt.Request(opts.Target.Spec.Model, nil).System)
	var batch []*pending
	batchTokens := 0
	flush := func() {
		if len(batch) == 0 {
			return
		}
		// The request's exact count, without tokenizing it again here, on
		// the one goroutine every prepared commit passes through.
		in := system + opts.Tokenizer.Count(prompt.Header(len(batch)))
		for _, p := range batch {
			in += p.blockTokens
		}
		est.Requests++
		est.Commits += len(batch)
		est.InputTokens += opts.Target.Scale(in) // as the model counts them
		est.MaxOutputTokens += opts.outputCap(prompt.MaxOutputTokens * len(batch))
		// Counted, a commit's text is never read again: let it go, or a dry
		// run over a long history holds every cut diff at once.
		for _, p := range batch {
			p.forget()
		}
		batch, batchTokens = nil, 0
	}
	d := &dispatcher{opts: opts}
	prepare(ctx, opts, misses, nil, func(p *pending) bool {
		if len(batch) > 0 && d.requestTokens(batchTokens+p.tokens, len(batch)+1) > opts.BatchTokens {
			flush()
		}
		batch = append(batch, p)
		batchTokens += p.tokens
		if len(batch) >= max(1, opts.BatchSize) {
			flush()
		}
		return true
	}, func(*pending, error) { est.Failed++ })
	flush()
}
