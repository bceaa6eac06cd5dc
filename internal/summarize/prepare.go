package summarize

import (
	"context"
	"time"

	"github.com/digest-cli/digest/internal/budget"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/report"
)

// prepare diffs and cuts each miss in walk order and hands it to send,
// stopping when send reports the run is over. A commit whose diff cannot
// be read fails alone: one damaged object must not cost the summaries of
// every other commit.
func prepare(ctx context.Context, opts Options, misses []*pending, send func(*pending) bool, fail func(*pending, error)) {
	diffOpts := history.DiffOptions{
		Renames: opts.Renames, Paths: opts.Walk.Paths,
		SkipPath: budget.SkipPath, MaxFileBytes: maxFileBytes,
	}
	for _, p := range misses {
		if ctx.Err() != nil {
			return
		}
		d, err := p.repo.repo.Diff(ctx, p.commit, diffOpts)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fail(p, err)
			continue
		}
		for _, w := range d.Warnings {
			opts.Log.Warn("could not read part of a commit; summarizing the rest", "repo", p.repo.repo.Path(), "commit", p.commit.Hash, "problem", w)
		}
		var sections []budget.Section
		var files []prompt.File
		for _, f := range d.Files {
			files = append(files, prompt.File{Status: f.Status, Path: f.Path, Added: f.Added, Removed: f.Removed, Skip: f.Skip})
			if f.Skip != "" {
				p.skipped = append(p.skipped, report.SkippedFile{Path: f.Path, Reason: f.Skip})
				continue
			}
			if f.Text != "" {
				sections = append(sections, budget.Section{Name: f.Path, Text: f.Text})
			}
		}
		p.cut = opts.Tokenizer.Fit(sections, opts.MaxDiffTokens)
		c := p.commit
		p.sent = prompt.Commit{
			Hash: c.Hash, Author: c.AuthorName, Date: c.AuthorDate.Format(time.RFC3339),
			Message: c.Message, Files: files, Diff: p.cut.Text,
		}
		if opts.Redactor != nil {
			p.redacted = redactSent(opts.Redactor, &p.sent)
			if n := p.redacted.Total(); n > 0 {
				opts.Log.Warn("secrets in this commit were replaced by markers before sending", "repo", p.repo.repo.Path(), "commit", c.Hash, "found", p.redacted.String())
			}
		}
		p.tokens = estimateTokens(p)
		if !send(p) {
			return
		}
	}
}

// estimateTokens sizes a commit's part of a request for batching without
// tokenizing it again: the diff's exact count plus a generous allowance for
// the message and the file list.
func estimateTokens(p *pending) int {
	listed := min(len(p.sent.Files), 260)
	return p.cut.Tokens + len(p.sent.Message)/3 + 12*listed + 40
}
