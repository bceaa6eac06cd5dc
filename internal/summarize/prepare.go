package summarize

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// prepare diffs, cuts and redacts the misses on one worker per core as they
// arrive and hands them to send in arrival order, stopping when send reports
// the run is over. Workers run at most prepareWindow commits ahead of send,
// which bounds the memory of commits prepared but not yet sent. A commit
// whose diff cannot be read fails alone: one damaged object must not cost
// the summaries of every other commit. take, unless nil, is asked about the
// misses in runs of up to claimChunk as they are reached, and reports which
// to prepare; those it refuses it has settled itself.
//
// prepare returns how many misses it took, and whether it took them all
// and handed each on (to send, fail or take) before misses was closed.
func prepare(ctx context.Context, opts Options, misses <-chan *pending, take func([]*pending) []bool, send func(*pending) bool, fail func(*pending, error)) (taken int, drained bool) {
	ctx, cancel := context.WithCancel(ctx)
	var workers, feeding sync.WaitGroup
	// Workers must be gone before prepare returns, as they write into the
	// pending commits, and so must the feeder, which counts into taken.
	defer workers.Wait()
	defer feeding.Wait()
	defer cancel()
	diffOpts := history.DiffOptions{
		Renames: opts.Renames, Paths: opts.Walk.Paths,
		SkipPath: tokenizer.SkipPath, MaxFileBytes: maxFileBytes,
		MaxTextBytes: tokenizer.MaxBytes(opts.MaxDiffTokens),
	}
	// Slot i%prepareWindow carries the outcome of the ith miss taken, and
	// then the end; a miss is handed to a worker only once the one
	// prepareWindow before it was taken out.
	slots := make([]chan prepared, prepareWindow)
	for i := range slots {
		slots[i] = make(chan prepared, 1)
	}
	free := make(chan struct{}, prepareWindow)
	for range prepareWindow {
		free <- struct{}{}
	}
	type job struct {
		i int
		p *pending
	}
	next := make(chan job)
	feeding.Go(func() {
		defer close(next)
		var chunk []*pending
		for i := 0; ; {
			chunk = chunk[:0]
			select {
			case p, ok := <-misses:
				if !ok {
					select {
					case <-free:
						slots[i%prepareWindow] <- prepared{end: true}
					case <-ctx.Done():
					}
					return
				}
				chunk = append(chunk, p)
			case <-ctx.Done():
				return
			}
			// Whatever else has arrived joins the chunk, without waiting.
		more:
			for len(chunk) < claimChunk {
				select {
				case p, ok := <-misses:
					if !ok {
						break more // seen again, and ended, on the next round
					}
					chunk = append(chunk, p)
				default:
					break more
				}
			}
			taken += len(chunk)
			var won []bool
			if take != nil {
				won = take(chunk)
			}
			for j, p := range chunk {
				select {
				case <-free:
				case <-ctx.Done():
					return
				}
				if won != nil && !won[j] {
					// The slot is free: the consumer took its last outcome
					// before handing back the token just received.
					slots[i%prepareWindow] <- prepared{p: p, refused: true}
				} else {
					select {
					case next <- job{i, p}:
					case <-ctx.Done():
						return
					}
				}
				i++
			}
		}
	})
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for j := range next {
				do := diffOpts
				do.Paths = j.p.repo.walk.Paths // pathspecs are taken in each repository
				out := prepareOne(ctx, opts, do, j.p)
				out.p = j.p
				slots[j.i%prepareWindow] <- out
			}
		})
	}
	for i := 0; ; i++ {
		var out prepared
		select {
		case out = <-slots[i%prepareWindow]:
		case <-ctx.Done():
			return
		}
		free <- struct{}{}
		if out.end {
			drained = true
			return
		}
		if out.refused {
			continue
		}
		p := out.p
		if p.repo.promisor != "" && len(out.warnings) > 0 {
			p.repo.incomplete++ // blobs a partial clone never fetched: said once, at the end
		} else {
			for _, w := range out.warnings {
				opts.Log.Warn("could not read part of a commit; summarizing the rest", "repo", p.repo.repo.Path(), "commit", p.commit.Hash, "problem", w)
			}
		}
		if out.err != nil {
			if ctx.Err() != nil {
				return
			}
			fail(p, out.err)
			continue
		}
		if !send(p) {
			return
		}
	}
}

// prepareWindow is how many commits workers may prepare ahead of sending:
// enough that one large commit does not idle the other workers.
const prepareWindow = 64

// claimChunk is how many misses take is asked about at once: one
// transaction of claims each, rather than one a commit contending with the
// writes of summaries (which cost a first run over go-git's history a
// third more time).
const claimChunk = 16

// prepared is a worker's outcome for one miss, whose fields it filled.
type prepared struct {
	p        *pending
	warnings []string
	err      error
	refused  bool // by take: not prepared here
	end      bool // no more misses
}

// prepareOne diffs one commit, cuts its diff to the budget and builds what
// the model is told of it.
func prepareOne(ctx context.Context, opts Options, diffOpts history.DiffOptions, p *pending) prepared {
	p.commitText = &commitText{}
	d, err := p.repo.repo.Diff(ctx, p.commit, diffOpts)
	if err != nil {
		return prepared{err: err}
	}
	var sections []tokenizer.Section
	var files []prompt.File
	for _, f := range d.Files {
		files = append(files, prompt.File{Status: f.Status, Path: f.Path, Added: f.Added, Removed: f.Removed, Skip: f.Skip})
		if f.Skip != "" {
			p.skipped = append(p.skipped, changelog.SkippedFile{Path: f.Path, Reason: f.Skip})
			continue
		}
		if f.Text != "" || f.TextOmitted {
			sections = append(sections, tokenizer.Section{Name: f.Path, Text: f.Text, Omitted: f.TextOmitted})
		}
	}
	p.cut = opts.Tokenizer.Fit(sections, opts.MaxDiffTokens)
	c := p.commit
	p.sent = prompt.Commit{
		Hash: c.Hash, Author: c.AuthorName, Date: c.AuthorDate.Format(time.RFC3339),
		Message: prompt.CutMessage(c.Message), Files: files, Diff: p.cut.Text,
	}
	p.sent.Message, p.sent.Diff = opts.Secrets.Scrub(p.sent.Message), opts.Secrets.Scrub(p.sent.Diff)
	if opts.Redactor != nil {
		p.redacted = redactSent(opts.Redactor, &p.sent)
		if n := p.redacted.Total(); n > 0 {
			opts.Log.Warn("secrets in this commit were replaced by markers before sending", "repo", p.repo.repo.Path(), "commit", c.Hash, "found", p.redacted.String())
		}
	}
	p.tokens = estimateTokens(p)
	if opts.DryRun {
		// The diff, counted already by the cut, starts and ends at a line
		// break: no token spans it and the lines around it.
		frame := p.sent
		frame.Diff = ""
		p.blockTokens = opts.Tokenizer.Count(prompt.Block(frame)) + p.cut.Tokens
	}
	return prepared{warnings: d.Warnings}
}

// estimateTokens sizes a commit's part of a request for batching without
// tokenizing it again: the diff's exact count plus a generous allowance for
// the message and the file list.
func estimateTokens(p *pending) int {
	listed := min(len(p.sent.Files), 260)
	return p.cut.Tokens + len(p.sent.Message)/3 + 12*listed + 40
}
