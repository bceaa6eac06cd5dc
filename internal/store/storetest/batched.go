package storetest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// The batched calls of a run that reads ahead and stores as fast as a
// provider answers: SaveEval, ClaimAll over many keys, ReleaseAll and
// LeaseHolders.

// startRun records a run for rows to belong to.
func startRun(t *testing.T, s store.Store, id string) {
	t.Helper()
	if err := s.StartRun(context.Background(), store.EvalRun{ID: id, Dataset: "d.jsonl", Models: []string{"m"}, Params: map[string]any{}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func claimAll(t *testing.T, s store.Store, owner string, ttl time.Duration, keys ...string) []bool {
	t.Helper()
	won, err := s.ClaimAll(context.Background(), keys, owner, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return won
}

func paidAnswer(k, text string) store.EvalResult {
	return store.EvalResult{Key: k, Model: "m", LatencyMS: 5, InputTokens: 10, OutputTokens: 2, CostUSD: 0.001,
		Request: []byte(`{"messages":[{"role":"user","content":"` + k + `"}]}`), Answer: text}
}

// SaveEval stores answers and rows and gives back the writer's leases
// among Release, in one call; the first answer for a key wins, the last
// row for a place.
func testSaveEvalStoresAnswersRowsAndReleases(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	startRun(t, s, "run-1")
	claimAll(t, s, "a", time.Minute, "k1", "k2", "k3")
	claimAll(t, s, "b", time.Minute, "k4")
	err := s.SaveEval(ctx, store.EvalWrite{
		Answers: []store.EvalResult{paidAnswer("k1", "first"), paidAnswer("k2", "two"), paidAnswer("k1", "second")},
		Rows: []store.RunResult{
			{RunID: "run-1", Model: "m", Item: "i1", Line: 1, Key: "k1", Pass: false},
			{RunID: "run-1", Model: "m", Item: "i2", Line: 2, Key: "k2", Pass: true, Score: 1},
			{RunID: "run-1", Model: "m", Item: "i1", Line: 1, Key: "k1", Pass: true, Score: 1},
			{RunID: "run-1", Model: "m", Item: "i3", Line: 3, Key: "k3", Error: "HTTP 500", Request: []byte(`{"failed":true}`)},
		},
		Owner:   "a",
		Release: []string{"k1", "k2", "k4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.EvalResults(ctx, []string{"k1", "k2", "k3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["k1"].Answer != "first" || got["k2"].Answer != "two" {
		t.Errorf("stored answers %+v, want k1 %q (the first written) and k2 %q", got, "first", "two")
	}
	var rows []store.RunRow
	for row, err := range s.RunRows(ctx, "run-1", []string{"m"}, true) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if len(rows) != 3 || !rows[0].Pass || !rows[1].Pass || rows[2].Error != "HTTP 500" || string(rows[2].Request) != `{"failed":true}` {
		t.Errorf("rows %+v, want lines 1 (passed, the last written) and 2 passed, 3 failed with its request", rows)
	}
	holders, err := s.LeaseHolders(ctx, []string{"k1", "k2", "k3", "k4"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"k3": "a", "k4": "b"}; !maps.Equal(holders, want) {
		t.Errorf("leases held after the write: %v, want %v (a's given back but k3, not released, and b's)", holders, want)
	}
}

// A write that fails stores nothing of itself and gives no lease back: a
// lease must never go before the answer it guards is stored.
func testSaveEvalIsAllOrNothing(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	claimAll(t, s, "a", time.Minute, "k1")
	err := s.SaveEval(ctx, store.EvalWrite{
		Answers: []store.EvalResult{paidAnswer("k1", "paid")},
		Rows:    []store.RunResult{{RunID: "no-such-run", Model: "m", Item: "i1", Line: 1, Key: "k1"}},
		Owner:   "a",
		Release: []string{"k1"},
	})
	if err == nil {
		t.Fatal("a row of a run that was never started was stored")
	}
	got, err := s.EvalResults(ctx, []string{"k1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Error("the answer of a failed write was stored")
	}
	if owner, held, err := s.LeaseOwner(ctx, "k1"); err != nil || !held || owner != "a" {
		t.Errorf("k1's lease after a failed write: %q %v %v, want still a's", owner, held, err)
	}
}

// A write larger than one statement takes is stored whole.
func testSaveEvalChunksLargeWrites(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	startRun(t, s, "run-1")
	const n = 1234
	var w store.EvalWrite
	keys := make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("k%04d", i)
		// Every third answer alike: payloads are shared by their hash.
		w.Answers = append(w.Answers, paidAnswer(keys[i], fmt.Sprint("answer ", i%3)))
		w.Rows = append(w.Rows, store.RunResult{RunID: "run-1", Model: "m", Item: keys[i], Line: i + 1, Key: keys[i], Pass: i%2 == 0})
	}
	claimAll(t, s, "a", time.Minute, keys...)
	w.Owner, w.Release = "a", keys
	if err := s.SaveEval(ctx, w); err != nil {
		t.Fatal(err)
	}
	got, err := s.EvalResults(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got["k1000"].Answer != "answer 1" {
		t.Errorf("%d answers stored of %d; k1000 %q", len(got), n, got["k1000"].Answer)
	}
	totals, err := s.RunTotals(ctx, "run-1", "m")
	if err != nil {
		t.Fatal(err)
	}
	if totals.Items != n || totals.Passed != (n+1)/2 || totals.Answered != n {
		t.Errorf("totals %+v, want %d items, %d passed, all answered", totals, n, (n+1)/2)
	}
	holders, err := s.LeaseHolders(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(holders) != 0 {
		t.Errorf("%d leases left of the %d given back", len(holders), n)
	}
}

// ClaimAll over more keys than one statement names, some repeated: free
// keys, expired ones and the owner's own are won, live ones of another's
// lost, and each position of a repeated key says the same.
func testClaimAllManyKeys(t *testing.T, b Backend) {
	s := newStore(t, b)
	const n = 1100
	keys := make([]string, 0, n+2)
	for i := range n {
		keys = append(keys, fmt.Sprintf("k%04d", i))
	}
	claimAll(t, s, "b", time.Minute, keys[:300]...)
	claimAll(t, s, "b", 30*time.Millisecond, keys[300:600]...)
	claimAll(t, s, "a", time.Minute, keys[600:700]...)
	time.Sleep(50 * time.Millisecond)
	keys = append(keys, keys[5], keys[650]) // repeated: one lost, one won
	won := claimAll(t, s, "a", time.Minute, keys...)
	for i, k := range keys {
		want := i >= 300 && i < n || i == n+1
		if won[i] != want {
			t.Errorf("key %d (%s) won %v, want %v", i, k, won[i], want)
		}
	}
	holders, err := s.LeaseHolders(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	if holders[keys[0]] != "b" || holders[keys[400]] != "a" || holders[keys[1000]] != "a" || len(holders) != n {
		t.Errorf("holders of %d keys; k0 %q, k400 %q, k1000 %q", len(holders), holders[keys[0]], holders[keys[400]], holders[keys[1000]])
	}
}

// ReleaseAll gives back the owner's leases among keys, and no other's.
func testReleaseAllGivesBackOnlyTheOwners(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	mine := make([]string, 700)
	for i := range mine {
		mine[i] = fmt.Sprintf("a%04d", i)
	}
	claimAll(t, s, "a", time.Minute, mine...)
	claimAll(t, s, "b", time.Minute, "b1")
	if err := s.ReleaseAll(ctx, append(slices.Clone(mine[:600]), "b1", "nobody's"), "a"); err != nil {
		t.Fatal(err)
	}
	holders, err := s.LeaseHolders(ctx, append(slices.Clone(mine), "b1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(holders) != 101 || holders["b1"] != "b" || holders[mine[650]] != "a" {
		t.Errorf("after releasing 600 of a's 700 leases and naming b's: %d held, b1 %q, %s %q", len(holders), holders["b1"], mine[650], holders[mine[650]])
	}
}

// Processes claiming overlapping runs of keys at once, in any order, half
// of them free and half left expired by a process gone, win every key once
// between them, and none fails: claims never wait on each other in a
// circle.
func testClaimAllAcrossStoresIsExclusive(t *testing.T, b Backend) {
	ctx := context.Background()
	where := b.Fresh(t)
	stores := [2]store.Store{open(t, b, where), open(t, b, where)}
	const keys = 300
	var expired []string
	for k := keys / 2; k < keys; k++ {
		expired = append(expired, fmt.Sprint("key-", k))
	}
	claimAll(t, stores[0], "gone", time.Millisecond, expired...)
	time.Sleep(20 * time.Millisecond)
	var won [keys]atomic.Int32
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			order := rng.Perm(keys)
			for start := 0; start < keys; start += 100 {
				batch := make([]string, 0, 100)
				for _, k := range order[start : start+100] {
					batch = append(batch, fmt.Sprint("key-", k))
				}
				got, err := stores[c%2].ClaimAll(ctx, batch, fmt.Sprint("owner-", c), time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				for i, ok := range got {
					if ok {
						var k int
						fmt.Sscanf(strings.TrimPrefix(batch[i], "key-"), "%d", &k)
						won[k].Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	for k := range won {
		if n := won[k].Load(); n != 1 {
			t.Errorf("key %d was won %d times", k, n)
		}
	}
}
