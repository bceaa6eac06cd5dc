package summarize

import (
	"context"
	"sync"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/store"
)

// scan walks one repository, fills in the entries of the commits the cache
// holds and hands on the rest, in walk order, as it reaches them.
type scan struct {
	opts Options
	rr   *repoRun
	res  *Output // only its entries: the dispatcher writes the rest meanwhile
	// counted, in a dry run over several repositories, holds the commits
	// counted already, under their repository's id.
	counted map[string]bool

	// Kept apart from res's stats until the walk is over.
	commits, cached, skippedFiles int
}

// The walk runs at most scanAhead misses ahead of preparation, and looks
// commits up in runs that grow from firstLookup to maxLookup: the first
// commits reach the workers soon, the later ones in few queries.
const (
	scanAhead   = 64
	firstLookup = 16
	maxLookup   = 512
)

// run walks the repository and sends its misses to out. head is HEAD's
// commit, unless headErr says why there is none.
func (s *scan) run(ctx context.Context, head string, headErr error, out chan<- *pending) error {
	r := s.rr.repo
	// The id keys the cache, the leases and a dry run's memory of clones; a
	// dry run without a database over one repository needs none of them.
	needID := s.rr.id == "" && (!s.opts.DryRun || s.opts.Store != nil || s.counted != nil)
	// The root is found by a walk of its own, down first parents: run beside
	// the main walk, on another core, it costs little time.
	var rootWalk sync.WaitGroup
	defer rootWalk.Wait()
	var rootErr error
	rootStarted := false
	findRoot := func(from string) {
		rootStarted = true
		rootWalk.Go(func() { rootErr = s.rr.findRoot(ctx, s.opts, from) })
	}
	if needID && headErr == nil {
		findRoot(head)
	}
	ready := false
	var walked []history.Commit
	lookup := firstLookup
	flush := func() error {
		if !ready {
			if needID && !rootStarted {
				findRoot(walked[0].Hash) // HEAD is unborn, but --all or --rev found commits
			}
			rootWalk.Wait()
			if rootErr != nil {
				return rootErr
			}
			if !s.opts.DryRun {
				if err := s.opts.Store.SaveRepository(ctx, store.Repository{ID: s.rr.id, RootCommit: s.rr.root, Path: r.Path()}); err != nil {
					return err
				}
			}
			ready = true
		}
		err := s.lookup(ctx, walked, out)
		walked = walked[:0]
		lookup = min(2*lookup, maxLookup)
		return err
	}
	err := r.Walk(ctx, s.rr.walk, func(c history.Commit) error {
		if c.Boundary {
			// Summarized as adding its whole tree, it would be cached as such
			// and served to every full clone that shares the cache.
			s.opts.Log.Warn("left out: the commit is the edge of a shallow clone, and without its parent what it changed cannot be known. Try: git fetch --deepen=1, or fetch-depth: 0 in actions/checkout",
				"repo", r.Path(), "commit", c.Hash)
			return nil
		}
		if s.rr.excluded(s.opts, c) {
			s.rr.left++
			return nil
		}
		walked = append(walked, c)
		if len(walked) < lookup {
			return nil
		}
		return flush()
	})
	// What was walked before the walk failed is still summarized: a damaged
	// commit deep in history costs its own summary, not those of the rest.
	if len(walked) > 0 && ctx.Err() == nil {
		if flushErr := flush(); err == nil {
			err = flushErr
		}
	}
	rootWalk.Wait() // it writes the id logged here
	s.opts.Log.Debug("walked repository", "repo", r.Path(), "repo_id", s.rr.id, "commits", s.commits, "cached", s.cached)
	return err
}

// lookup fills in the entries of walked commits the cache holds and sends
// the others on.
func (s *scan) lookup(ctx context.Context, walked []history.Commit, out chan<- *pending) error {
	var cached map[string]store.Summary
	if s.opts.Store != nil { // nil only in a dry run with no database yet
		hashes := make([]string, len(walked))
		for i, c := range walked {
			hashes[i] = c.Hash
		}
		var err error
		if cached, err = s.rr.summaries(ctx, s.opts, hashes); err != nil {
			return err
		}
	}
	s.opts.Progress.Found(len(walked))
	s.opts.Progress.Done(len(cached))
	for _, c := range walked {
		s.commits++
		e := changelog.Entry{
			Repo: s.rr.repo.Name(), RepoID: s.rr.id, Commit: c.Hash, Author: c.AuthorName,
			Date: c.AuthorDate, Subject: c.Subject, Model: s.opts.Target.Spec.String(),
		}
		s.rr.describe(&e, c)
		if sum, ok := cached[c.Hash]; ok {
			fillFromSummary(&e, sum, c.Message)
			e.Cached = true
			s.cached++
			s.skippedFiles += len(e.SkippedFiles)
			switch {
			case !s.opts.DryRun:
				s.rr.entries = append(s.rr.entries, s.res.entries.add(e))
			case s.opts.Highlights: // for the sections a dry run counts highlights of
				s.rr.entries = append(s.rr.entries, &e)
			}
			continue
		}
		p := &pending{repo: s.rr, commit: c}
		if s.opts.DryRun {
			if s.opts.Highlights {
				s.rr.entries = append(s.rr.entries, &e) // its summary unknown: counted so
			}
			if s.counted != nil {
				k := key.Commit(s.rr.id, c.Hash)
				if s.counted[k] {
					continue // met in another clone, and counted there
				}
				s.counted[k] = true
			}
		} else {
			p.entry = s.res.entries.add(e)
			s.rr.entries = append(s.rr.entries, p.entry)
		}
		// Its diff will be cut to a token budget: read the ranks while
		// the walk goes on, and not at all if every commit is cached.
		s.opts.Tokenizer.Preload()
		select {
		case out <- p:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// entryList holds a run's report entries in chunks that never move: the
// walk adds entries while the dispatcher fills in those it handed on.
type entryList struct {
	chunks [][]changelog.Entry
	// hidden are entries the notes leave out though they were summarized:
	// a --skip-tags release's, those a release.yml excludes.
	hidden map[*changelog.Entry]bool
}

const entryChunk = 256

func (l *entryList) add(e changelog.Entry) *changelog.Entry {
	if n := len(l.chunks); n == 0 || len(l.chunks[n-1]) == entryChunk {
		l.chunks = append(l.chunks, make([]changelog.Entry, 0, entryChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, e)
	return &(*last)[len(*last)-1]
}

// summarized returns the entries that have a summary, in walk order: those
// of commits that failed, or were never sent because the run stopped, are
// left out, for a report only shows what is known.
func (l *entryList) summarized() []changelog.Entry {
	var out []changelog.Entry
	for _, chunk := range l.chunks {
		for i, e := range chunk {
			if e.Summary != "" && !l.hidden[&chunk[i]] {
				out = append(out, e)
			}
		}
	}
	return out
}
