// Package storetest is one table of tests every store backend passes:
// what a digest database promises (summaries, answers, runs, claims),
// through the store.Store interface alone. Each backend's own tests call
// Run with a way to make and open its databases.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// Backend makes and opens databases of one kind.
type Backend struct {
	// Fresh makes a new, empty database and says where it is (a path, a
	// URL), removing it when the test ends.
	Fresh func(t *testing.T) string
	// Open opens the database at where; each call is a store of its own,
	// as another process's would be.
	Open func(ctx context.Context, where string) (store.Store, error)
}

// Run runs every test of the table against b.
func Run(t *testing.T, b Backend) {
	for _, tt := range []struct {
		name string
		test func(*testing.T, Backend)
	}{
		{"SummaryRoundTrip", testSummaryRoundTrip},
		{"SummariesChunksLongLists", testSummariesChunksLongLists},
		{"SummaryKeySeparation", testSummaryKeySeparation},
		{"FirstWriteWins", testFirstWriteWins},
		{"RepositoriesOf", testRepositoriesOf},
		{"CompleteSummaryReplacesAPartialOne", testCompleteSummaryReplacesAPartialOne},
		{"ConcurrentSavesOneStore", testConcurrentSavesOneStore},
		{"ConcurrentSavesTwoStoresOnOneDatabase", testConcurrentSavesTwoStoresOnOneDatabase},
		{"Leases", testLeases},
		{"LeasesAcrossConnectionsAreExclusive", testLeasesAcrossConnectionsAreExclusive},
		{"ClaimAll", testClaimAll},
		{"EvalResultsRoundTripAndAggregate", testEvalResultsRoundTripAndAggregate},
		{"RateStartsFullThenPaces", testRateStartsFullThenPaces},
		{"RatePauseAndLearnedLimitsAreShared", testRatePauseAndLearnedLimitsAreShared},
		{"RateSharedByStoresNeverExceedsTheLimit", testRateSharedByStoresNeverExceedsTheLimit},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.test(t, b) })
	}
}

const (
	testRepo   = "repo-a"
	testRoot   = "0000000000000000000000000000000000000001"
	testModel  = "openai:gpt-4o-mini"
	testPrompt = "p1"
	testScope  = ""
)

// open opens where, closing it when the test ends.
func open(t *testing.T, b Backend, where string) store.Store {
	t.Helper()
	s, err := b.Open(context.Background(), where)
	if err != nil {
		t.Fatalf("Open(%s): %v", where, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newStore is a fresh database holding testRepo.
func newStore(t *testing.T, b Backend) store.Store {
	t.Helper()
	s := open(t, b, b.Fresh(t))
	saveRepo(t, s, testRepo, testRoot)
	return s
}

func saveRepo(t *testing.T, s store.Store, id, root string) {
	t.Helper()
	if err := s.SaveRepository(context.Background(), store.Repository{ID: id, RootCommit: root, Path: "/src/" + id}); err != nil {
		t.Fatalf("SaveRepository(%s): %v", id, err)
	}
}

func hash(i int) string { return fmt.Sprintf("%040x", i) }

func commitFor(k store.SummaryKey) store.Commit {
	return store.Commit{
		RepoID: k.RepoID, Hash: k.Commit, AuthorName: "Ada", AuthorEmail: "ada@example.com",
		AuthorDate: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		CommitDate: time.Date(2024, 1, 2, 3, 4, 6, 0, time.UTC),
		Subject:    "subject of " + k.Commit,
	}
}

func key(commit string) store.SummaryKey {
	return store.SummaryKey{RepoID: testRepo, Commit: commit, Model: testModel, PromptVersion: testPrompt, Scope: testScope}
}

func save(t *testing.T, s store.Store, sum store.Summary) {
	t.Helper()
	if err := s.SaveSummary(context.Background(), commitFor(sum.SummaryKey), sum); err != nil {
		t.Fatalf("SaveSummary(%+v): %v", sum.SummaryKey, err)
	}
}

func lookup(t *testing.T, s store.Store, k store.SummaryKey, commits ...string) map[string]store.Summary {
	t.Helper()
	got, err := s.Summaries(context.Background(), k.RepoID, k.Model, k.PromptVersion, k.Scope, commits)
	if err != nil {
		t.Fatalf("Summaries(%+v): %v", k, err)
	}
	return got
}

func testSummaryRoundTrip(t *testing.T, b Backend) {
	created := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("UTC+2", 2*3600))
	tests := []struct {
		name        string
		in          store.Summary
		wantSkipped []string
	}{
		{
			name: "every field set",
			in: store.Summary{
				SummaryKey:   key(hash(1)),
				Text:         "Adds a \"quoted\" thing.\nSecond line; ünïcödé ✓ and 'single' quotes.",
				InputTokens:  1234,
				OutputTokens: 56,
				CostUSD:      0.000123,
				DiffTokens:   98765,
				Truncated:    true,
				SkippedFiles: []string{"vendor/a.go", "logo.png (binary)", "dir with space/ü.txt"},
				CreatedAt:    created,
				ChangeType:   "feat",
				ChangeScope:  "plumbing/format",
				Breaking:     true,
			},
			wantSkipped: []string{"vendor/a.go", "logo.png (binary)", "dir with space/ü.txt"},
		},
		{
			name:        "zero values and nil skipped files",
			in:          store.Summary{SummaryKey: key(hash(2))},
			wantSkipped: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, b)
			before := time.Now()
			save(t, s, tt.in)
			after := time.Now()

			got, ok := lookup(t, s, tt.in.SummaryKey, tt.in.Commit)[tt.in.Commit]
			if !ok {
				t.Fatalf("summary of %s not returned", tt.in.Commit)
			}
			if got.SummaryKey != tt.in.SummaryKey {
				t.Errorf("key = %+v, want %+v", got.SummaryKey, tt.in.SummaryKey)
			}
			if got.Text != tt.in.Text {
				t.Errorf("Text = %q, want %q", got.Text, tt.in.Text)
			}
			if got.InputTokens != tt.in.InputTokens || got.OutputTokens != tt.in.OutputTokens {
				t.Errorf("tokens = %d/%d, want %d/%d", got.InputTokens, got.OutputTokens, tt.in.InputTokens, tt.in.OutputTokens)
			}
			if got.CostUSD != tt.in.CostUSD {
				t.Errorf("CostUSD = %v, want %v", got.CostUSD, tt.in.CostUSD)
			}
			if got.DiffTokens != tt.in.DiffTokens {
				t.Errorf("DiffTokens = %d, want %d", got.DiffTokens, tt.in.DiffTokens)
			}
			if got.Truncated != tt.in.Truncated {
				t.Errorf("Truncated = %v, want %v", got.Truncated, tt.in.Truncated)
			}
			if got.ChangeType != tt.in.ChangeType || got.ChangeScope != tt.in.ChangeScope || got.Breaking != tt.in.Breaking {
				t.Errorf("kind of change = %q %q %v, want %q %q %v", got.ChangeType, got.ChangeScope, got.Breaking, tt.in.ChangeType, tt.in.ChangeScope, tt.in.Breaking)
			}
			if got.SkippedFiles == nil || !slices.Equal(got.SkippedFiles, tt.wantSkipped) {
				t.Errorf("SkippedFiles = %#v, want %#v", got.SkippedFiles, tt.wantSkipped)
			}
			if tt.in.CreatedAt.IsZero() {
				// Unset means "now": it must fall within the call.
				if got.CreatedAt.Before(before.Truncate(time.Nanosecond)) || got.CreatedAt.After(after) {
					t.Errorf("CreatedAt = %v, want between %v and %v", got.CreatedAt, before, after)
				}
			} else if !got.CreatedAt.Equal(tt.in.CreatedAt) {
				t.Errorf("CreatedAt = %v, want %v (to the nanosecond)", got.CreatedAt, tt.in.CreatedAt)
			}
		})
	}
}

func testSummariesChunksLongLists(t *testing.T, b Backend) {
	s := newStore(t, b)
	// Stored commits sit on both sides of every chunk boundary (500, 1000)
	// and of SQLite's default limit of 32766 bound parameters, which a
	// single unchunked IN list over total hashes would exceed.
	const total = 33000
	stored := []int{0, 1, 498, 499, 500, 501, 999, 1000, 1001, 1500, 32765, 32766, 32767, total - 1}
	for _, i := range stored {
		save(t, s, store.Summary{SummaryKey: key(hash(i)), Text: "summary " + hash(i)})
	}
	all := make([]string, total)
	for i := range all {
		all[i] = hash(i)
	}

	for _, n := range []int{0, 1, 499, 500, 501, 1000, 1001, 1002, total} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			got := lookup(t, s, key(""), all[:n]...)
			want := 0
			for _, i := range stored {
				if i >= n {
					continue
				}
				want++
				if got[hash(i)].Text != "summary "+hash(i) {
					t.Errorf("commit #%d: got %+v, want its stored summary", i, got[hash(i)])
				}
			}
			if len(got) != want {
				t.Errorf("got %d summaries, want exactly the %d stored ones", len(got), want)
			}
		})
	}
}

func testSummaryKeySeparation(t *testing.T, b Backend) {
	s := newStore(t, b)
	saveRepo(t, s, "repo-b", "0000000000000000000000000000000000000002")
	base := key(hash(1))
	save(t, s, store.Summary{SummaryKey: base, Text: "base"})

	variants := []struct {
		name string
		key  store.SummaryKey
	}{
		{"other model", store.SummaryKey{RepoID: base.RepoID, Commit: base.Commit, Model: "anthropic:claude", PromptVersion: base.PromptVersion, Scope: base.Scope}},
		{"other prompt version", store.SummaryKey{RepoID: base.RepoID, Commit: base.Commit, Model: base.Model, PromptVersion: "p2", Scope: base.Scope}},
		{"other scope", store.SummaryKey{RepoID: base.RepoID, Commit: base.Commit, Model: base.Model, PromptVersion: base.PromptVersion, Scope: "src/"}},
		{"other repository", store.SummaryKey{RepoID: "repo-b", Commit: base.Commit, Model: base.Model, PromptVersion: base.PromptVersion, Scope: base.Scope}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if got := lookup(t, s, v.key, base.Commit); len(got) != 0 {
				t.Fatalf("summary stored under %+v was served for %+v: %+v", base, v.key, got)
			}
			// A summary under the other key is a row of its own: both coexist.
			save(t, s, store.Summary{SummaryKey: v.key, Text: v.name})
			if got := lookup(t, s, v.key, base.Commit)[base.Commit].Text; got != v.name {
				t.Errorf("variant text = %q, want %q", got, v.name)
			}
			if got := lookup(t, s, base, base.Commit)[base.Commit].Text; got != "base" {
				t.Errorf("base text = %q after saving %s, want %q", got, v.name, "base")
			}
		})
	}
}

func testFirstWriteWins(t *testing.T, b Backend) {
	s := newStore(t, b)
	k := key(hash(1))
	save(t, s, store.Summary{SummaryKey: k, Text: "first", InputTokens: 1, CostUSD: 0.5})
	save(t, s, store.Summary{SummaryKey: k, Text: "second", InputTokens: 2, CostUSD: 0.25})
	got := lookup(t, s, k, k.Commit)[k.Commit]
	if got.Text != "first" || got.InputTokens != 1 || got.CostUSD != 0.5 {
		t.Errorf("after two saves got %+v, want the first one kept", got)
	}
}

func testRepositoriesOf(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	const rootB = "00000000000000000000000000000000000000bb"
	saveRepo(t, s, "repo-b", rootB)
	save(t, s, store.Summary{SummaryKey: key(hash(10))})
	kb := key(hash(20))
	kb.RepoID = "repo-b"
	save(t, s, store.Summary{SummaryKey: kb})
	// The same commit under a second id, as --repo-id would store it.
	kb2 := key(hash(10))
	kb2.RepoID = "repo-b"
	save(t, s, store.Summary{SummaryKey: kb2})

	tests := []struct {
		commit string
		want   []string // "id=root"
	}{
		{hash(10), []string{testRepo + "=" + testRoot, "repo-b=" + rootB}},
		{hash(20), []string{"repo-b=" + rootB}},
		{hash(30), nil},
		{testRoot, nil}, // a root that was never stored as a commit
	}
	for _, tt := range tests {
		repos, err := s.RepositoriesOf(ctx, tt.commit)
		if err != nil {
			t.Errorf("RepositoriesOf(%s): %v", tt.commit, err)
		}
		var got []string
		for _, r := range repos {
			got = append(got, r.ID+"="+r.RootCommit)
		}
		sort.Strings(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("RepositoriesOf(%s) = %v, want %v", tt.commit, got, tt.want)
		}
	}
}

// TestCompleteSummaryReplacesAPartialOne: a summary written from a partial
// clone's diff is kept until a complete one arrives, which replaces it; a
// complete one is never replaced, by a partial one or another complete one.
func testCompleteSummaryReplacesAPartialOne(t *testing.T, b Backend) {
	s := newStore(t, b)
	k := key(hash(1))
	save(t, s, store.Summary{SummaryKey: k, Text: "from a blobless clone", Partial: true})
	save(t, s, store.Summary{SummaryKey: k, Text: "another blobless clone", Partial: true})
	if got := lookup(t, s, k, k.Commit)[k.Commit]; got.Text != "from a blobless clone" || !got.Partial {
		t.Fatalf("after two partial summaries: %+v, want the first, partial", got)
	}
	save(t, s, store.Summary{SummaryKey: k, Text: "from a full clone", InputTokens: 7})
	if got := lookup(t, s, k, k.Commit)[k.Commit]; got.Text != "from a full clone" || got.Partial || got.InputTokens != 7 {
		t.Fatalf("after a complete summary: %+v, want it to replace the partial one", got)
	}
	save(t, s, store.Summary{SummaryKey: k, Text: "partial again", Partial: true})
	save(t, s, store.Summary{SummaryKey: k, Text: "complete again"})
	if got := lookup(t, s, k, k.Commit)[k.Commit]; got.Text != "from a full clone" {
		t.Fatalf("a complete summary was replaced: %+v", got)
	}
}

func testConcurrentSavesOneStore(t *testing.T, b Backend) {
	s := newStore(t, b)
	concurrentSaves(t, []store.Store{s}, 8, 25)
}

func testConcurrentSavesTwoStoresOnOneDatabase(t *testing.T, b Backend) {
	where := b.Fresh(t)
	one, other := open(t, b, where), open(t, b, where)
	saveRepo(t, one, testRepo, testRoot)
	concurrentSaves(t, []store.Store{one, other}, 8, 25)
}

func testLeases(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	claim := func(key, owner string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.Claim(ctx, key, owner, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !claim("k", "a", time.Minute) {
		t.Fatal("a fresh key was not claimed")
	}
	if claim("k", "b", time.Minute) {
		t.Error("b took a live lease of a's")
	}
	if !claim("k", "a", time.Minute) {
		t.Error("a could not renew its own lease")
	}
	if !claim("short", "a", 30*time.Millisecond) {
		t.Fatal("claim failed")
	}
	time.Sleep(50 * time.Millisecond)
	if !claim("short", "b", time.Minute) {
		t.Error("b could not take over an expired lease")
	}
	if err := s.Release(ctx, "k", "b"); err != nil {
		t.Fatal(err)
	}
	if claim("k", "b", time.Minute) {
		t.Error("b's release freed a lease it did not hold")
	}
	if err := s.Release(ctx, "k", "a"); err != nil {
		t.Fatal(err)
	}
	if !claim("k", "b", time.Minute) {
		t.Error("a released lease could not be claimed")
	}
}

// Two stores on one file, eight claimants each: every key is won once.
func testLeasesAcrossConnectionsAreExclusive(t *testing.T, b Backend) {
	ctx := context.Background()
	where := b.Fresh(t)
	stores := [2]store.Store{open(t, b, where), open(t, b, where)}
	var won [50]atomic.Int32
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Go(func() {
			s := stores[c%2]
			for k := range won {
				ok, err := s.Claim(ctx, fmt.Sprint("key-", k), fmt.Sprint("owner-", c), time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					won[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range won {
		if n := won[k].Load(); n != 1 {
			t.Errorf("key %d was claimed %d times", k, n)
		}
	}
}

func testClaimAll(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	claimAll := func(owner string, ttl time.Duration, keys ...string) []bool {
		t.Helper()
		won, err := s.ClaimAll(ctx, keys, owner, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return won
	}
	if won := claimAll("a", time.Minute, "k1", "k2"); !slices.Equal(won, []bool{true, true}) {
		t.Fatalf("fresh keys: %v", won)
	}
	if won := claimAll("b", time.Minute, "k1", "k3"); !slices.Equal(won, []bool{false, true}) {
		t.Errorf("b won %v of a live lease of a's and a fresh key", won)
	}
	if won := claimAll("a", 30*time.Millisecond, "k2"); !won[0] {
		t.Error("a could not renew its own lease")
	}
	time.Sleep(50 * time.Millisecond)
	if won := claimAll("b", time.Minute, "k2", "k1"); !slices.Equal(won, []bool{true, false}) {
		t.Errorf("b won %v of an expired lease and a live one", won)
	}
	if owner, _, _ := s.LeaseOwner(ctx, "k2"); owner != "b" {
		t.Errorf("k2 is owned by %q", owner)
	}
}

func testEvalResultsRoundTripAndAggregate(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	run := store.EvalRun{ID: "20261130-aaaa", Dataset: "d.jsonl", Models: []string{"m1", "m2"}, Params: map[string]any{"repeat": 1}, CreatedAt: time.Now()}
	if err := s.StartRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	// m1 passes lines 1,2,3; m2 passes 1 and fails 2, errors on 3.
	pass := map[string][]bool{"m1": {true, true, true}, "m2": {true, false, false}}
	for _, m := range run.Models {
		for line := 1; line <= 3; line++ {
			k := m + "-key-" + string(rune('0'+line))
			rr := store.RunResult{RunID: run.ID, Model: m, Item: "item", Line: line, Key: k, Pass: pass[m][line-1], Score: 1, Expected: []string{"42"}}
			var paid *store.EvalResult
			if m == "m2" && line == 3 {
				rr.Error, rr.Score = "HTTP 500", 0
			} else {
				paid = &store.EvalResult{Key: k, Model: m, LatencyMS: float64(100 * line), InputTokens: 10, OutputTokens: 2, CostUSD: 0.001,
					Request: []byte(`{"messages":[{"role":"user","content":"q"}]}`), Answer: "answer " + k}
			}
			if paid != nil {
				if err := s.SaveEvalResult(ctx, *paid); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.SaveRunResults(ctx, []store.RunResult{rr}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.EvalResults(ctx, []string{"m1-key-1", "m2-key-3", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["m1-key-1"].Answer != "answer m1-key-1" || got["m1-key-1"].LatencyMS != 100 {
		t.Errorf("EvalResults = %+v: want only the stored answer, never the error", got)
	}
	tot, err := s.RunTotals(ctx, run.ID, "m2")
	if err != nil {
		t.Fatal(err)
	}
	if tot.Items != 3 || tot.Passed != 1 || tot.Errors != 1 || tot.Answered != 2 || tot.InputTokens != 20 {
		t.Errorf("m2 totals %+v", tot)
	}
	if v, _ := s.LatencyAt(ctx, run.ID, "m1", 2); v != 300 {
		t.Errorf("third latency of m1 = %v, want 300", v)
	}
	aOnly, bOnly, both, none, err := s.PairCounts(ctx, run.ID, "m1", "m2")
	if err != nil || aOnly != 2 || bOnly != 0 || both != 1 || none != 0 {
		t.Errorf("pair counts %d %d %d %d, %v", aOnly, bOnly, both, none, err)
	}
	n := 0
	for row, err := range s.RunRows(ctx, run.ID, []string{"m2", "m1"}, true) {
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && (row.Model != "m2" || row.Line != 1 || row.Answer != "answer m2-key-1" || !bytes.Contains(row.Request, []byte(`"q"`)) || row.Expected[0] != "42") {
			t.Errorf("first row %+v", row)
		}
		if row.Model == "m2" && row.Line == 3 && (row.Error == "" || row.Answer != "") {
			t.Errorf("errored row %+v", row)
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d rows, want 6", n)
	}
	if r, ok, err := s.Run(ctx, "20261130"); !ok || err != nil || r.ID != run.ID || len(r.Models) != 2 {
		t.Errorf("Run by prefix = %+v, %v, %v", r, ok, err)
	}
	if err := s.FinishRun(ctx, run.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if runs, _ := s.Runs(ctx); len(runs) != 1 || runs[0].FinishedAt.IsZero() {
		t.Errorf("Runs = %+v", runs)
	}
}

// concurrentSaves runs workers goroutines, each saving perWorker distinct
// summaries plus one shared key, through stores[w%len(stores)].
func concurrentSaves(t *testing.T, stores []store.Store, workers, perWorker int) {
	t.Helper()
	ctx := context.Background()
	shared := key(hash(1 << 20))
	var wg sync.WaitGroup
	errs := make(chan error, workers*(perWorker+1))
	for w := range workers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range perWorker {
				k := key(hash(w*perWorker + i))
				if err := s.SaveSummary(ctx, commitFor(k), store.Summary{SummaryKey: k, Text: k.Commit}); err != nil {
					errs <- fmt.Errorf("worker %d save %d: %w", w, i, err)
				}
			}
			if err := s.SaveSummary(ctx, commitFor(shared), store.Summary{SummaryKey: shared, Text: fmt.Sprint("worker ", w)}); err != nil {
				errs <- fmt.Errorf("worker %d shared save: %w", w, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	want := make([]string, workers*perWorker)
	for i := range want {
		want[i] = hash(i)
	}
	for n, s := range stores {
		got := lookup(t, s, key(""), want...)
		if len(got) != len(want) {
			t.Errorf("store %d sees %d summaries, want %d", n, len(got), len(want))
		}
		for _, h := range want {
			if got[h].Text != h {
				t.Errorf("store %d: summary of %s = %q", n, h, got[h].Text)
				break
			}
		}
		sh := lookup(t, s, shared, shared.Commit)[shared.Commit].Text
		if !strings.HasPrefix(sh, "worker ") {
			t.Errorf("store %d: shared key holds %q, want one worker's summary", n, sh)
		}
	}
}

func takeRate(t *testing.T, s store.Store, limiter string, requests, tokens store.RateCharge) store.RateState {
	t.Helper()
	st, err := s.TakeRate(context.Background(), limiter, requests, tokens)
	if err != nil {
		t.Fatalf("TakeRate(%s): %v", limiter, err)
	}
	return st
}

// A fresh limiter lets its burst through at once, then makes each request
// wait its interval; the token limit holds a large request back by its size.
func testRateStartsFullThenPaces(t *testing.T, b Backend) {
	s := newStore(t, b)
	const interval = 200 * time.Millisecond
	one := store.RateCharge{Cost: interval, Burst: 2 * interval}
	none := store.RateCharge{}
	for i := range 2 {
		if st := takeRate(t, s, "acct", one, none); st.Wait != 0 {
			t.Fatalf("request %d of a burst of 2 waits %s", i+1, st.Wait)
		}
	}
	// The third is due one interval after the burst, less the few
	// milliseconds the calls took.
	if st := takeRate(t, s, "acct", one, none); st.Wait <= interval-100*time.Millisecond || st.Wait > interval {
		t.Errorf("third request waits %s, want about %s", st.Wait, interval)
	}
	if st := takeRate(t, s, "other", one, none); st.Wait != 0 {
		t.Errorf("another account's first request waits %s", st.Wait)
	}
	// 50 tokens of 10ms each against a burst of 100ms: 400ms to wait.
	tokens := store.RateCharge{Cost: 50 * 10 * time.Millisecond, Burst: 100 * time.Millisecond}
	if st := takeRate(t, s, "tokens", none, tokens); st.Wait <= 300*time.Millisecond || st.Wait > 400*time.Millisecond {
		t.Errorf("a request of 50 tokens waits %s, want about 400ms", st.Wait)
	}
}

// A pause or a learned limit written through one store is read through
// another, as another process would; a shorter pause never cuts a longer.
func testRatePauseAndLearnedLimitsAreShared(t *testing.T, b Backend) {
	ctx := context.Background()
	where := b.Fresh(t)
	a, other := open(t, b, where), open(t, b, where)
	if err := a.PauseRate(ctx, "acct", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := a.PauseRate(ctx, "acct", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := a.LearnRate(ctx, "acct", 500, 0); err != nil {
		t.Fatal(err)
	}
	if err := a.LearnRate(ctx, "acct", 0, 30000); err != nil {
		t.Fatal(err)
	}
	st := takeRate(t, other, "acct", store.RateCharge{Cost: 100 * time.Millisecond, Burst: 100 * time.Millisecond}, store.RateCharge{})
	if st.Paused <= time.Second || st.Paused > 2*time.Second {
		t.Errorf("paused for %s, want about 2s", st.Paused)
	}
	if st.Wait < st.Paused {
		t.Errorf("waits %s, less than the pause of %s", st.Wait, st.Paused)
	}
	if st.Requests != 500 || st.Tokens != 30000 {
		t.Errorf("learned limits %d requests, %d tokens; want 500, 30000", st.Requests, st.Tokens)
	}
	// After the pause the charges are paced from its end, not bunched there.
	next := takeRate(t, other, "acct", store.RateCharge{Cost: 100 * time.Millisecond, Burst: 100 * time.Millisecond}, store.RateCharge{})
	if gap := next.Wait - st.Wait; gap < 90*time.Millisecond {
		t.Errorf("the second request after a pause goes %s after the first, want about 100ms", gap)
	}
	if st := takeRate(t, other, "another", store.RateCharge{}, store.RateCharge{}); st.Paused != 0 || st.Requests != 0 {
		t.Errorf("another account is paused %s with a learned limit of %d", st.Paused, st.Requests)
	}
}

// Eight stores on one database, as eight processes, charge one limiter at
// once. The times they are told to send at never put more than the limit
// in any window: every charge is counted once, none lost to a race.
func testRateSharedByStoresNeverExceedsTheLimit(t *testing.T, b Backend) {
	where := b.Fresh(t)
	const (
		interval = 10 * time.Millisecond
		burst    = 3
		each     = 25
	)
	var stores [8]store.Store
	for i := range stores {
		stores[i] = open(t, b, where)
	}
	var mu sync.Mutex
	var sends []time.Time
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			for range each {
				st, err := s.TakeRate(context.Background(), "acct", store.RateCharge{Cost: interval, Burst: burst * interval}, store.RateCharge{})
				if err != nil {
					t.Error(err)
					return
				}
				at := time.Now().Add(st.Wait)
				mu.Lock()
				sends = append(sends, at)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.SortFunc(sends, func(a, b time.Time) int { return a.Compare(b) })
	// Each send time is read a little after the database's clock was: one
	// more per window is the allowance for that.
	const window = 200 * time.Millisecond
	allowed := int(window/interval) + burst + 1
	for i := range sends {
		n := 0
		for j := i; j < len(sends) && sends[j].Sub(sends[i]) < window; j++ {
			n++
		}
		if n > allowed {
			t.Fatalf("%d sends in the %s from send %d, more than the limit's %d", n, window, i, allowed)
		}
	}
	if span, want := sends[len(sends)-1].Sub(sends[0]), time.Duration(len(sends)-burst-1)*interval; span < want-50*time.Millisecond {
		t.Errorf("%d sends spread over %s, want at least %s", len(sends), span, want)
	}
}
