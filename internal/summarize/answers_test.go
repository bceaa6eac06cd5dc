package summarize

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

// TestBatchAnswersAreMatchedByHash has the model answer a batch shuffled,
// with one commit left out and one nobody asked about added: every summary
// must land on its own commit (the offline model starts each with the
// commit's subject), and the missing one is asked about again, alone.
func TestBatchAnswersAreMatchedByHash(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	var mu sync.Mutex
	var sizes []int
	rng := rand.New(rand.NewPCG(1, 2))
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			resp, err := next.Complete(ctx, req)
			if err != nil {
				return resp, err
			}
			var answers []prompt.Answer
			if err := json.Unmarshal([]byte(resp.Text), &answers); err != nil {
				t.Errorf("offline answer is not JSON: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			sizes = append(sizes, len(answers))
			rng.Shuffle(len(answers), func(i, j int) { answers[i], answers[j] = answers[j], answers[i] })
			if len(answers) > 1 {
				answers = answers[1:] // one commit left out
				answers = append(answers, prompt.Answer{Commit: strings.Repeat("f", 40), Summary: "about a commit nobody asked about"})
			}
			resp.Text = "Here you go:\n```json\n" + prompt.FormatAnswer(answers) + "\n```"
			return resp, nil
		})
	}
	opts := h.options("", f.Dir)
	opts.BatchSize = 4
	res := h.mustRun(opts)
	if len(res.Changelog.Entries) != 8 {
		t.Fatalf("%d entries, want 8", len(res.Changelog.Entries))
	}
	for _, e := range res.Changelog.Entries {
		if !strings.HasPrefix(e.Summary, e.Subject) {
			t.Errorf("commit %s (%q) got the summary %q", e.Commit, e.Subject, e.Summary)
		}
	}
	slices.Sort(sizes)
	if want := []int{1, 1, 4, 4}; !slices.Equal(sizes, want) {
		t.Errorf("request sizes %v, want %v: two batches, then each left-out commit alone", sizes, want)
	}
}

// TestGarbledBatchAnswerIsAskedAgainOneByOne: a batch's answer naming a
// commit by a short hash and another by a number is not trusted for any
// commit: each of the batch's commits is asked about again, alone, and
// every one ends summarized.
func TestGarbledBatchAnswerIsAskedAgainOneByOne(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	var mu sync.Mutex
	calls := 0
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			mu.Lock()
			calls++
			first := calls == 1
			mu.Unlock()
			resp, err := next.Complete(ctx, req)
			if first {
				resp.Text = `[{"commit": "` + f.Root[:12] + `", "summary": "short hashes are not accepted"}, {"commit": 42}]`
			}
			return resp, err
		})
	}
	res := h.mustRun(h.options("", f.Dir))
	if calls != 9 || len(res.Changelog.Entries) != 8 || res.Changelog.Stats.Summarized != 8 {
		t.Errorf("%d calls, %d entries, %d summarized; want 1 batch and 8 single retries, all 8 summarized",
			calls, len(res.Changelog.Entries), res.Changelog.Stats.Summarized)
	}
	for _, e := range res.Changelog.Entries {
		if !strings.HasPrefix(e.Summary, e.Subject) {
			t.Errorf("commit %s (%q) got the summary %q", e.Commit, e.Subject, e.Summary)
		}
	}
}
