package summarize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// foundCount counts the commits a run has found.
type foundCount struct{ atomic.Int64 }

func (f *foundCount) Found(n int)             { f.Add(int64(n)) }
func (*foundCount) Done(int)                  {}
func (*foundCount) Spent(int, float64, int64) {}

// TestWalkStaysCloseAheadOfAStalledRun: while nothing takes prepared
// commits, as when every request waits on a slow provider, the walk stops a
// bounded distance ahead, instead of walking the whole history first and
// holding every commit of it.
func TestWalkStaysCloseAheadOfAStalledRun(t *testing.T) {
	const commits = 600 // past what the walk may run ahead: several lookups' worth
	r := gittest.New(t)
	for i := range commits {
		r.Write("f.txt", fmt.Sprint(i, "\n")).Commit(fmt.Sprint("commit ", i))
	}
	repo, err := history.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	found := &foundCount{}
	opts := Options{MaxDiffTokens: 300, DryRun: true, Tokenizer: tok, Log: slog.New(slog.DiscardHandler), Progress: found}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &scan{opts: opts, rr: &repoRun{repo: repo}, res: &Output{}}
	misses := make(chan *pending, scanAhead)
	walked := make(chan error, 1)
	go func() {
		defer close(misses)
		head, headErr := repo.Head()
		walked <- s.run(ctx, head, headErr, misses)
	}()
	prepared := make(chan struct{})
	go func() {
		defer close(prepared)
		prepare(ctx, opts, misses, nil, func(*pending) bool {
			<-ctx.Done() // a send that never completes
			return false
		}, func(p *pending, err error) { t.Errorf("commit %s failed: %v", p.commit.Subject, err) })
	}()
	// Wait for the walk to stop: found stays the same for a while.
	last, still := int64(-1), 0
	for deadline := time.Now().Add(20 * time.Second); still < 10 && time.Now().Before(deadline); {
		time.Sleep(25 * time.Millisecond)
		if n := found.Load(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	if n := found.Load(); n == 0 || n >= commits {
		t.Errorf("the walk found %d of %d commits while nothing was sent; want it stopped well short of the end", n, commits)
	}
	cancel()
	if err := <-walked; !errors.Is(err, context.Canceled) {
		t.Errorf("the stopped walk ended with %v, want context.Canceled", err)
	}
	<-prepared
}
