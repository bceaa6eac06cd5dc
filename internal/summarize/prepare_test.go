package summarize

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// preparedHistory is a history whose commits differ widely in size, so that
// parallel workers finish them out of order, with the misses of a dry run.
func preparedHistory(t *testing.T) (Options, *history.Repo, []*pending) {
	t.Helper()
	r := gittest.New(t)
	for i := range 120 {
		var b strings.Builder
		for j := range (i % 7) * (i % 11) * 40 {
			fmt.Fprintf(&b, "line %d of file %d, written at commit %d\n", j, i%5, i)
		}
		r.Write(fmt.Sprintf("f%d.txt", i%5), b.String()).Write(fmt.Sprintf("d%d/n.txt", i%3), fmt.Sprint(i, "\n")).Commit(fmt.Sprint("commit ", i))
	}
	repo, err := history.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxDiffTokens: 300, DryRun: true, Tokenizer: tok, Log: slog.New(slog.DiscardHandler), Progress: noProgress{}}
	return opts, repo, walkMisses(t, opts, repo)
}

// walkMisses scans the whole of repo and returns the misses it hands on.
func walkMisses(t *testing.T, opts Options, repo *history.Repo) []*pending {
	t.Helper()
	s := &scan{opts: opts, rr: &repoRun{repo: repo}, res: &Output{}}
	out := make(chan *pending)
	var misses []*pending
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range out {
			misses = append(misses, p)
		}
	}()
	head, headErr := repo.Head()
	err := s.run(context.Background(), head, headErr, out)
	close(out)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return misses
}

// TestPrepareInWalkOrderAsAlone: parallel preparation hands commits on in
// walk order, each cut exactly as a lone diff of the whole commit is cut,
// and a cut diff is a prefix of the whole diff followed by the note.
func TestPrepareInWalkOrderAsAlone(t *testing.T) {
	opts, repo, misses := preparedHistory(t)
	var order []string
	prepare(context.Background(), opts, feed(misses), nil, func(p *pending) bool {
		order = append(order, p.commit.Hash)
		d, err := repo.Diff(context.Background(), p.commit, history.DiffOptions{SkipPath: tokenizer.SkipPath, MaxFileBytes: maxFileBytes})
		if err != nil {
			t.Fatal(err)
		}
		var sections []tokenizer.Section
		var whole strings.Builder
		for _, f := range d.Files {
			sections = append(sections, tokenizer.Section{Name: f.Path, Text: f.Text})
			whole.WriteString(f.Text)
		}
		if want := opts.Tokenizer.Fit(sections, opts.MaxDiffTokens); !reflect.DeepEqual(p.cut, want) {
			t.Errorf("commit %s: cut %+v, a lone diff cuts %+v", p.commit.Subject, p.cut, want)
		}
		if p.cut.Truncated {
			body := p.cut.Text[:strings.LastIndex(p.cut.Text, "[digest: diff cut to")]
			if !strings.HasPrefix(whole.String(), body) {
				t.Errorf("commit %s: the cut diff is not a prefix of the whole diff", p.commit.Subject)
			}
		}
		return true
	}, func(p *pending, err error) { t.Errorf("commit %s failed: %v", p.commit.Subject, err) })
	if len(order) != len(misses) {
		t.Fatalf("%d commits handed on, want %d", len(order), len(misses))
	}
	for i, p := range misses {
		if order[i] != p.commit.Hash {
			t.Fatalf("commit %d handed on out of walk order", i)
		}
	}
	truncated := 0
	for _, p := range misses {
		if p.cut.Truncated {
			truncated++
		}
	}
	if truncated == 0 || truncated == len(misses) {
		t.Errorf("%d of %d commits cut: the history should have both kinds", truncated, len(misses))
	}
}

// TestPrepareStopsWhenSendRefuses: once send reports the run is over,
// prepare returns without handing on anything more.
func TestPrepareStopsWhenSendRefuses(t *testing.T) {
	opts, _, misses := preparedHistory(t)
	sent := 0
	prepare(context.Background(), opts, feed(misses), nil, func(*pending) bool {
		sent++
		return sent < 3
	}, func(*pending, error) {})
	if sent != 3 {
		t.Errorf("send called %d times after refusing at the third", sent)
	}
}
