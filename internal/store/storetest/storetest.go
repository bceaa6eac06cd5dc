// Package storetest is one table of tests every store backend passes:
// what a digest database promises (summaries, answers, runs, claims),
// through the store.Store interface alone. Each backend's own tests call
// Run with a way to make and open its databases.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
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
	// TimePrecision is the finest time the database keeps: 0 for every
	// nanosecond (SQLite's text), time.Microsecond for PostgreSQL's
	// timestamptz. Times read back are compared cut to it.
	TimePrecision time.Duration
	// Dialect is the SQL the database speaks, "sqlite" or "postgres":
	// the tests of the views and of the manual's queries, which differ
	// where dates are cut into weeks and days, read it.
	Dialect string
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
		{"ClaimAllManyKeys", testClaimAllManyKeys},
		{"ClaimAllAcrossStoresIsExclusive", testClaimAllAcrossStoresIsExclusive},
		{"ReleaseAllGivesBackOnlyTheOwners", testReleaseAllGivesBackOnlyTheOwners},
		{"SaveEvalStoresAnswersRowsAndReleases", testSaveEvalStoresAnswersRowsAndReleases},
		{"SaveEvalIsAllOrNothing", testSaveEvalIsAllOrNothing},
		{"SaveEvalChunksLargeWrites", testSaveEvalChunksLargeWrites},
		{"EvalResultsRoundTripAndAggregate", testEvalResultsRoundTripAndAggregate},
		{"RunsNewestFirstWithinASecond", testRunsNewestFirstWithinASecond},
		{"RateStartsFullThenPaces", testRateStartsFullThenPaces},
		{"RatePauseAndLearnedLimitsAreShared", testRatePauseAndLearnedLimitsAreShared},
		{"RateSharedByStoresNeverExceedsTheLimit", testRateSharedByStoresNeverExceedsTheLimit},
		{"BatchRoundTrip", testBatchRoundTrip},
		{"OpenBatchesNewestFirst", testOpenBatchesNewestFirst},
		{"UpdateBatch", testUpdateBatch},
		{"CreateBatchRefusesWhatItCannotRecord", testCreateBatchRefusesWhatItCannotRecord},
		{"BatchMembersPicksTheNewestItem", testBatchMembersPicksTheNewestItem},
		{"BatchMembersChunksLongLists", testBatchMembersChunksLongLists},
		{"SaveBatchResults", testSaveBatchResults},
		{"ConcurrentCreateBatchTwoStoresOnOneDatabase", testConcurrentCreateBatchTwoStoresOnOneDatabase},
		{"FinishAndCachedTokensRoundTrip", testFinishAndCachedTokensRoundTrip},
		{"TokenFactorsAreWeightedMeans", testTokenFactorsAreWeightedMeans},
		{"FailedResultKeepsItsRequest", testFailedResultKeepsItsRequest},
		{"MetricScoresRoundTrip", testMetricScoresRoundTrip},
		{"PruneRunsKeepsAnswersAndRunningRuns", testPruneRunsKeepsAnswersAndRunningRuns},
		{"ForgeAnswersRoundTrip", testForgeAnswersRoundTrip},
		{"ForgeAnswersChunksLongLists", testForgeAnswersChunksLongLists},
		{"ForgeAnswersExpire", testForgeAnswersExpire},
		{"ForgeAnswerKeptForEverWins", testForgeAnswerKeptForEverWins},
		{"PayloadsInObjectStore", testPayloadsInObjectStore},
		{"StoppedObjectStoreStoresNothing", testStoppedObjectStoreStoresNothing},
		{"ViewsKeepTheirPromisedColumns", testViewsKeepTheirPromisedColumns},
		{"EvalScoresViewHasARowPerMetric", testEvalScoresViewHasARowPerMetric},
		{"ManualQueries", testManualQueries},
		{"MetricRowsGoWithTheirRun", testMetricRowsGoWithTheirRun},
		{"RunRowsPagesThroughLargeRuns", testRunRowsPagesThroughLargeRuns},
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
				if got.CreatedAt.Before(before.Truncate(max(b.TimePrecision, time.Nanosecond))) || got.CreatedAt.After(after) {
					t.Errorf("CreatedAt = %v, want between %v and %v", got.CreatedAt, before, after)
				}
			} else if want := tt.in.CreatedAt.Truncate(b.TimePrecision); !got.CreatedAt.Equal(want) {
				t.Errorf("CreatedAt = %v, want %v (to the database's precision, %v)", got.CreatedAt, want, b.TimePrecision)
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
	// Three lines, all with the id "item": the dataset shared one id.
	if tot.Items != 3 || tot.Passed != 1 || tot.Errors != 1 || tot.Answered != 2 || tot.InputTokens != 20 || tot.Lines != 3 || tot.IDs != 1 {
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
	cost := 0.0125
	judge := &store.RunJudge{Model: "openai:judge", Verdicts: 6, CostUSD: &cost}
	if err := s.FinishRun(ctx, run.ID, time.Now(), judge); err != nil {
		t.Fatal(err)
	}
	if runs, _ := s.Runs(ctx); len(runs) != 1 || runs[0].FinishedAt.IsZero() || runs[0].Judge == nil ||
		runs[0].Judge.Model != judge.Model || runs[0].Judge.Verdicts != 6 || runs[0].Judge.CostUSD == nil || *runs[0].Judge.CostUSD != cost {
		t.Errorf("Runs = %+v, want it finished with its judge %+v", runs, judge)
	}
	// A judge whose price is unknown keeps its cost unknown; a run without
	// a judge has none.
	for _, j := range []*store.RunJudge{{Model: "ollama:judge", Verdicts: 2}, nil} {
		id := fmt.Sprintf("judge-%v", j != nil)
		if err := s.StartRun(ctx, store.EvalRun{ID: id, Dataset: "d.jsonl", Models: []string{"m1"}, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, id, time.Now(), j); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Run(ctx, id)
		if !ok || err != nil || (j == nil) != (got.Judge == nil) || j != nil && (got.Judge.Verdicts != 2 || got.Judge.CostUSD != nil) {
			t.Errorf("Run(%s) = %+v, %v, %v; want judge %+v", id, got, ok, err, j)
		}
	}
}

// testRunsNewestFirstWithinASecond starts runs at a whole second and at
// fractions of it: stored as RFC3339Nano text, "05Z" sorted after "05.4Z".
func testRunsNewestFirstWithinASecond(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	second := time.Date(2026, 12, 1, 15, 4, 5, 0, time.UTC)
	for i, at := range []time.Time{second, second.Add(400 * time.Millisecond), second.Add(450 * time.Millisecond)} {
		run := store.EvalRun{ID: fmt.Sprintf("run-%d", i), Dataset: "d.jsonl", Models: []string{"m1"}, CreatedAt: at}
		if err := s.StartRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.ID)
	}
	if want := []string{"run-2", "run-1", "run-0"}; !slices.Equal(got, want) {
		t.Errorf("Runs = %v, want %v (newest first)", got, want)
	}
	if !runs[2].CreatedAt.Equal(second) {
		t.Errorf("run-0 created at %v, want %v", runs[2].CreatedAt, second)
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
	start := time.Now()
	for i := range 2 {
		if st := takeRate(t, s, "acct", one, none); st.Wait != 0 {
			t.Fatalf("request %d of a burst of 2 waits %s", i+1, st.Wait)
		}
	}
	// The third is due one interval after the first call: its wait plus
	// the time the calls took (at most the time since start, long on a
	// loaded machine) is the interval, to the database clock's
	// millisecond.
	if st := takeRate(t, s, "acct", one, none); st.Wait+time.Since(start) < interval-2*time.Millisecond || st.Wait > interval {
		t.Errorf("third request waits %s, %s after the first call; want it due an interval after that", st.Wait, time.Since(start))
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
	before := time.Now()
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
	// Each wait counts from its own call, so the time between the calls
	// (long on a loaded machine) is added back: at most the whole span of
	// both calls, which bunching would leave far below 100ms.
	next := takeRate(t, other, "acct", store.RateCharge{Cost: 100 * time.Millisecond, Burst: 100 * time.Millisecond}, store.RateCharge{})
	if gap := next.Wait - st.Wait + time.Since(before); gap < 90*time.Millisecond {
		t.Errorf("the second request after a pause goes at most %s after the first, want about 100ms", gap)
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
	var slowest time.Duration // the longest take, from asking to the answer
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			for range each {
				asked := time.Now()
				st, err := s.TakeRate(context.Background(), "acct", store.RateCharge{Cost: interval, Burst: burst * interval}, store.RateCharge{})
				if err != nil {
					t.Error(err)
					return
				}
				answered := time.Now()
				at := answered.Add(st.Wait)
				mu.Lock()
				sends = append(sends, at)
				slowest = max(slowest, answered.Sub(asked))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.SortFunc(sends, func(a, b time.Time) int { return a.Compare(b) })
	// Each send time is read after the database's clock was, by up to the
	// take's round trip (through a pooler, on a loaded machine, tens of
	// milliseconds): the sends that round trip can crowd into a window are
	// the allowance for that. A limit that held nothing would allow
	// hundreds.
	const window = 200 * time.Millisecond
	allowed := int(window/interval) + burst + 1 + int(slowest/interval)
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

const batchModel = "openai:gpt-4o-mini"

func createBatch(t *testing.T, s store.Store, b store.Batch, items ...store.BatchItem) {
	t.Helper()
	if err := s.CreateBatch(context.Background(), b, items); err != nil {
		t.Fatalf("CreateBatch(%s): %v", b.ID, err)
	}
}

func batches(t *testing.T, s store.Store, open bool) []store.Batch {
	t.Helper()
	got, err := s.Batches(context.Background(), open)
	if err != nil {
		t.Fatalf("Batches(%v): %v", open, err)
	}
	return got
}

func batchItems(t *testing.T, s store.Store, id string) []store.BatchItem {
	t.Helper()
	got, err := s.BatchItems(context.Background(), id)
	if err != nil {
		t.Fatalf("BatchItems(%s): %v", id, err)
	}
	return got
}

func batchMembers(t *testing.T, s store.Store, model string, members ...string) map[string]store.BatchItem {
	t.Helper()
	got, err := s.BatchMembers(context.Background(), model, members)
	if err != nil {
		t.Fatalf("BatchMembers(%s, %d members): %v", model, len(members), err)
	}
	return got
}

func batchIDs(bs []store.Batch) []string {
	var ids []string
	for _, b := range bs {
		ids = append(ids, b.ID)
	}
	return ids
}

func testBatchRoundTrip(t *testing.T, b Backend) {
	s := newStore(t, b)
	created := time.Date(2026, 11, 30, 7, 8, 9, 123456789, time.FixedZone("UTC+2", 2*3600))
	in := store.Batch{ID: "digest-batch-1", Model: batchModel, BaseURL: "http://127.0.0.1:8080/v1", CreatedAt: created}
	// Recorded out of the custom ids' order, members out of theirs, a
	// request that is not UTF-8, and a member named twice.
	items := []store.BatchItem{
		{CustomID: "c", Members: []string{"lease-z", "lease-a", "lease-m"}, Request: []byte(`{"messages":[{"role":"user","content":"ünï ✓"}]}`)},
		{CustomID: "a", Members: []string{"lease-b", "lease-b"}, Request: []byte{0, 0xff, 0xfe, '\n', 0}},
		{CustomID: "b", Request: []byte(`{}`)},
	}
	before := time.Now()
	createBatch(t, s, in, items...)

	got := batches(t, s, false)
	if len(got) != 1 {
		t.Fatalf("Batches = %+v, want the one batch", got)
	}
	g := got[0]
	if g.ID != in.ID || g.Model != in.Model || g.BaseURL != in.BaseURL || g.ProviderID != "" || g.Collected {
		t.Errorf("batch = %+v, want %+v", g, in)
	}
	if g.Status != "creating" || g.Items != len(items) {
		t.Errorf("status %q and %d items, want \"creating\" and %d", g.Status, g.Items, len(items))
	}
	if want := created.Truncate(b.TimePrecision); !g.CreatedAt.Equal(want) {
		t.Errorf("CreatedAt = %v, want %v (to the database's precision, %v)", g.CreatedAt, want, b.TimePrecision)
	}
	if g.UpdatedAt.Before(before.Add(-time.Millisecond)) || g.UpdatedAt.After(time.Now()) {
		t.Errorf("UpdatedAt = %v, want the time of CreateBatch", g.UpdatedAt)
	}

	gotItems := batchItems(t, s, in.ID)
	wantMembers := [][]string{{"lease-z", "lease-a", "lease-m"}, {"lease-b"}, nil}
	if len(gotItems) != len(items) {
		t.Fatalf("BatchItems = %d items, want %d", len(gotItems), len(items))
	}
	for i, it := range gotItems {
		if it.BatchID != in.ID || it.CustomID != items[i].CustomID || !bytes.Equal(it.Request, items[i].Request) || it.Done {
			t.Errorf("item %d = %+v, want %+v in batch %s, not done", i, it, items[i], in.ID)
		}
		if !slices.Equal(it.Members, wantMembers[i]) {
			t.Errorf("item %s members = %q, want %q", it.CustomID, it.Members, wantMembers[i])
		}
	}
	// Items and members beyond one statement's worth keep their order.
	var many []store.BatchItem
	for i := 450; i > 0; i-- {
		many = append(many, store.BatchItem{CustomID: fmt.Sprintf("item-%03d", i), Members: []string{fmt.Sprint("z", i), fmt.Sprint("a", i)}})
	}
	createBatch(t, s, store.Batch{ID: "digest-batch-2", Model: batchModel}, many...)
	gotMany := batchItems(t, s, "digest-batch-2")
	if len(gotMany) != len(many) {
		t.Fatalf("BatchItems = %d items, want %d", len(gotMany), len(many))
	}
	for i, it := range gotMany {
		if it.CustomID != many[i].CustomID || !slices.Equal(it.Members, many[i].Members) {
			t.Fatalf("item %d = %s %q, want %s %q: not in the order recorded", i, it.CustomID, it.Members, many[i].CustomID, many[i].Members)
		}
	}
	if got := batchItems(t, s, "no-such-batch"); len(got) != 0 {
		t.Errorf("BatchItems of an unknown batch = %+v", got)
	}
}

// Batches created a tenth of a second apart on one whole second sort by
// time, not by their text; collected ones are left out of the open list.
func testOpenBatchesNewestFirst(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	t0 := time.Date(2026, 11, 30, 7, 8, 9, 0, time.UTC)
	for _, c := range []struct {
		id string
		at time.Time
	}{{"b-mid", t0.Add(100 * time.Millisecond)}, {"b-old", t0}, {"b-new", t0.Add(time.Second)}, {"b-newest", t0.Add(time.Second + 10*time.Millisecond)}} {
		createBatch(t, s, store.Batch{ID: c.id, Model: batchModel, CreatedAt: c.at}, store.BatchItem{CustomID: "1"})
	}
	if got, want := batchIDs(batches(t, s, false)), []string{"b-newest", "b-new", "b-mid", "b-old"}; !slices.Equal(got, want) {
		t.Errorf("Batches(all) = %v, want %v", got, want)
	}
	all := batches(t, s, false)
	for _, collected := range []string{"b-newest", "b-mid"} {
		i := slices.IndexFunc(all, func(b store.Batch) bool { return b.ID == collected })
		done := all[i]
		done.Status, done.Collected = "ended", true
		if err := s.UpdateBatch(ctx, done); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := batchIDs(batches(t, s, true)), []string{"b-new", "b-old"}; !slices.Equal(got, want) {
		t.Errorf("Batches(open) = %v, want %v", got, want)
	}
	if got := batchIDs(batches(t, s, false)); len(got) != 4 {
		t.Errorf("Batches(all) after collecting = %v, want all four", got)
	}
}

func testUpdateBatch(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	created := time.Now().Add(-time.Hour)
	createBatch(t, s, store.Batch{ID: "b1", Model: batchModel, BaseURL: "http://x", CreatedAt: created}, store.BatchItem{CustomID: "1"}, store.BatchItem{CustomID: "2"})
	first := batches(t, s, false)[0]

	time.Sleep(2 * time.Millisecond)
	before := time.Now()
	upd := store.Batch{ID: "b1", Model: "ignored:model", BaseURL: "http://ignored", ProviderID: "batch_abc123", Status: "failed",
		Items: 3, Succeeded: 4, Errored: 5, Canceled: 6, Expired: 7, Message: "input file: line 2 is not JSON", Collected: true,
		CreatedAt: time.Now(), UpdatedAt: time.Unix(0, 0)}
	if err := s.UpdateBatch(ctx, upd); err != nil {
		t.Fatal(err)
	}
	got := batches(t, s, false)[0]
	want := upd
	want.Model, want.BaseURL, want.CreatedAt, want.UpdatedAt = batchModel, "http://x", first.CreatedAt, got.UpdatedAt
	if got != want {
		t.Errorf("after UpdateBatch: %+v\nwant %+v", got, want)
	}
	if want := created.Truncate(b.TimePrecision); !got.CreatedAt.Equal(want) {
		t.Errorf("CreatedAt moved to %v, want %v", got.CreatedAt, want)
	}
	if got.UpdatedAt.Before(before.Truncate(max(b.TimePrecision, time.Nanosecond))) || got.UpdatedAt.After(time.Now()) || !got.UpdatedAt.After(first.UpdatedAt) {
		t.Errorf("UpdatedAt = %v, want the time of UpdateBatch (after %v)", got.UpdatedAt, before)
	}
	// A look taken before another process collected the batch, written
	// after, leaves it collected.
	stale := want
	stale.Status, stale.Succeeded, stale.Collected = "in_progress", 1, false
	if err := s.UpdateBatch(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if again := batches(t, s, false)[0]; again != got {
		t.Errorf("a collected batch was updated: %+v\nwant %+v", again, got)
	}
	err := s.UpdateBatch(ctx, store.Batch{ID: "no-such-batch", Status: "ended"})
	if err == nil || !strings.Contains(err.Error(), "no-such-batch") || !strings.Contains(err.Error(), "Try: ") {
		t.Errorf("UpdateBatch of an unknown batch: %v, want an error naming it and what to do", err)
	}
	if got := batchIDs(batches(t, s, false)); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("after updating an unknown batch: %v", got)
	}
}

// A repeated batch id, an item without a custom id or with one used twice
// is an error and records nothing: the first batch stays as it was.
func testCreateBatchRefusesWhatItCannotRecord(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	first := store.Batch{ID: "b1", Model: batchModel, Status: "creating"}
	createBatch(t, s, first, store.BatchItem{CustomID: "1", Members: []string{"m1"}, Request: []byte("r1")})
	tests := []struct {
		name  string
		batch store.Batch
		items []store.BatchItem
		want  string
	}{
		{"repeated id", store.Batch{ID: "b1", Model: "other:model", Status: "in_progress"},
			[]store.BatchItem{{CustomID: "1", Members: []string{"m2"}}, {CustomID: "2", Members: []string{"m3"}}}, "recorded already"},
		{"no id", store.Batch{Model: batchModel}, []store.BatchItem{{CustomID: "1", Members: []string{"m2"}}}, "no id"},
		{"empty custom id", store.Batch{ID: "b2", Model: batchModel}, []store.BatchItem{{CustomID: "1", Members: []string{"m2"}}, {Members: []string{"m3"}}}, `""`},
		{"custom id twice", store.Batch{ID: "b2", Model: batchModel}, []store.BatchItem{{CustomID: "x", Members: []string{"m2"}}, {CustomID: "x", Members: []string{"m3"}}}, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CreateBatch(ctx, tt.batch, tt.items)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "Try: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("CreateBatch = %v, want one line saying %s and what to try", err, tt.want)
			}
			got := batches(t, s, false)
			if len(got) != 1 || got[0].ID != "b1" || got[0].Model != batchModel || got[0].Status != "creating" {
				t.Errorf("Batches = %+v, want only the first, as it was", got)
			}
			if items := batchItems(t, s, "b1"); len(items) != 1 || string(items[0].Request) != "r1" || !slices.Equal(items[0].Members, []string{"m1"}) {
				t.Errorf("items of b1 = %+v, want the first's", items)
			}
			if found := batchMembers(t, s, batchModel, "m1", "m2", "m3"); len(found) != 1 || found["m1"].BatchID != "b1" {
				t.Errorf("BatchMembers = %+v, want only m1 of b1", found)
			}
			if found := batchMembers(t, s, "other:model", "m1", "m2", "m3"); len(found) != 0 {
				t.Errorf("BatchMembers of the refused batch's model = %+v, want none", found)
			}
		})
	}
}

func testBatchMembersPicksTheNewestItem(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	t0 := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	item := func(id string, members ...string) store.BatchItem {
		return store.BatchItem{CustomID: id, Members: members, Request: []byte("request " + id)}
	}
	createBatch(t, s, store.Batch{ID: "new", Model: batchModel, CreatedAt: t0.Add(time.Hour)}, item("n1", "x"))
	createBatch(t, s, store.Batch{ID: "old", Model: batchModel, CreatedAt: t0}, item("o1", "x", "y"), item("o2", "v"), item("o3", "v"))
	createBatch(t, s, store.Batch{ID: "other-model", Model: "anthropic:claude-haiku", CreatedAt: t0.Add(2 * time.Hour)}, item("x1", "x", "z"))
	// Two batches of one time: the one recorded later wins, whatever its id.
	createBatch(t, s, store.Batch{ID: "tie-b", Model: batchModel, CreatedAt: t0.Add(30 * time.Minute)}, item("tb", "w"))
	createBatch(t, s, store.Batch{ID: "tie-a", Model: batchModel, CreatedAt: t0.Add(30 * time.Minute)}, item("ta", "w", "u"))
	if err := s.SaveBatchResults(ctx, "old", []store.BatchItem{{CustomID: "o1", Done: true, Answer: "answer o1", InputTokens: 3, OutputTokens: 4}}); err != nil {
		t.Fatal(err)
	}

	got := batchMembers(t, s, batchModel, "x", "y", "z", "w", "v", "unknown", "x")
	want := map[string]store.BatchItem{
		"x": {BatchID: "new", CustomID: "n1", Members: []string{"x"}},
		"y": {BatchID: "old", CustomID: "o1", Members: []string{"x", "y"}, Done: true, Answer: "answer o1", InputTokens: 3, OutputTokens: 4},
		"w": {BatchID: "tie-a", CustomID: "ta", Members: []string{"w", "u"}},
		"v": {BatchID: "old", CustomID: "o3", Members: []string{"v"}},
	}
	if len(got) != len(want) {
		t.Errorf("BatchMembers found %d members, want %d: %+v", len(got), len(want), got)
	}
	for m, w := range want {
		g, ok := got[m]
		if !ok || g.BatchID != w.BatchID || g.CustomID != w.CustomID || !slices.Equal(g.Members, w.Members) ||
			g.Done != w.Done || g.Answer != w.Answer || g.InputTokens != w.InputTokens || g.OutputTokens != w.OutputTokens || g.Error != w.Error {
			t.Errorf("member %s: %+v, want %+v", m, g, w)
		}
		if g.Request != nil {
			t.Errorf("member %s came with its request %q", m, g.Request)
		}
	}
	if got := batchMembers(t, s, "anthropic:claude-haiku", "x", "z", "y"); len(got) != 2 || got["z"].BatchID != "other-model" || got["x"].BatchID != "other-model" {
		t.Errorf("BatchMembers of the other model = %+v, want x and z of its batch", got)
	}
	if got := batchMembers(t, s, batchModel); len(got) != 0 {
		t.Errorf("BatchMembers of no members = %+v", got)
	}
}

// Members sit on both sides of the chunk boundaries of the lookups (500,
// 1000) and of SQLite's default limit of 32766 bound parameters, which one
// unchunked IN list over every member asked for would exceed.
func testBatchMembersChunksLongLists(t *testing.T, b Backend) {
	s := newStore(t, b)
	const total = 33000
	stored := []int{0, 1, 498, 499, 500, 501, 999, 1000, 1001, 1500, 32765, 32766, 32767, total - 1}
	member := func(i int) string { return fmt.Sprintf("member-%05d", i) }
	var items []store.BatchItem
	for _, i := range stored {
		items = append(items, store.BatchItem{CustomID: fmt.Sprint(i), Members: []string{member(i)}})
	}
	// An item of many members, so that the members of the items found
	// are looked up across chunks as well.
	var many []string
	for i := range 1200 {
		many = append(many, fmt.Sprintf("many-%04d", i))
	}
	items = append(items, store.BatchItem{CustomID: "many", Members: many})
	createBatch(t, s, store.Batch{ID: "b", Model: batchModel}, items...)
	all := make([]string, total)
	for i := range all {
		all[i] = member(i)
	}
	for _, n := range []int{0, 1, 499, 500, 501, 1000, 1001, 1002, total} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			got := batchMembers(t, s, batchModel, all[:n]...)
			want := 0
			for _, i := range stored {
				if i >= n {
					continue
				}
				want++
				if it := got[member(i)]; it.CustomID != fmt.Sprint(i) || !slices.Equal(it.Members, []string{member(i)}) {
					t.Errorf("member #%d: got %+v, want item %d", i, it, i)
				}
			}
			if len(got) != want {
				t.Errorf("got %d members, want exactly the %d stored", len(got), want)
			}
		})
	}
	got := batchMembers(t, s, batchModel, many...)
	if len(got) != len(many) {
		t.Fatalf("got %d of the %d members of one item", len(got), len(many))
	}
	for _, m := range []string{many[0], many[499], many[500], many[len(many)-1]} {
		if it := got[m]; it.CustomID != "many" || !slices.Equal(it.Members, many) {
			t.Errorf("member %s: item %s with %d members, want item many with all %d in order", m, it.CustomID, len(it.Members), len(many))
		}
	}
}

func testSaveBatchResults(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	createBatch(t, s, store.Batch{ID: "b1", Model: batchModel},
		store.BatchItem{CustomID: "answered", Members: []string{"m1"}, Request: []byte("request 1")},
		store.BatchItem{CustomID: "errored", Members: []string{"m2"}, Request: []byte("request 2")},
		store.BatchItem{CustomID: "waiting", Members: []string{"m3"}, Request: []byte("request 3")})
	createBatch(t, s, store.Batch{ID: "b2", Model: batchModel}, store.BatchItem{CustomID: "answered", Request: []byte("request of b2")})

	// A result the batch does not hold stores none of the others.
	err := s.SaveBatchResults(ctx, "b1", []store.BatchItem{
		{CustomID: "answered", Done: true, Answer: "too early"},
		{CustomID: "stranger", Done: true, Answer: "not ours"},
	})
	if err == nil || !strings.Contains(err.Error(), `"stranger"`) || !strings.Contains(err.Error(), "Try: ") {
		t.Errorf("a result of an item b1 lacks: %v, want an error naming it", err)
	}
	if items := batchItems(t, s, "b1"); items[0].Done || items[0].Answer != "" || string(items[0].Request) != "request 1" {
		t.Errorf("after a refused save: %+v, want the item as it was", items[0])
	}

	if err := s.SaveBatchResults(ctx, "b1", []store.BatchItem{
		{CustomID: "answered", Done: true, Answer: "the answer ✓", InputTokens: 1234, OutputTokens: 56},
		{CustomID: "errored", Done: true, Error: "expired"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveBatchResults(ctx, "b1", nil); err != nil {
		t.Errorf("SaveBatchResults of no results: %v", err)
	}
	items := batchItems(t, s, "b1")
	want := []store.BatchItem{
		{BatchID: "b1", CustomID: "answered", Members: []string{"m1"}, Done: true, Answer: "the answer ✓", InputTokens: 1234, OutputTokens: 56},
		{BatchID: "b1", CustomID: "errored", Members: []string{"m2"}, Done: true, Error: "expired"},
		{BatchID: "b1", CustomID: "waiting", Members: []string{"m3"}, Request: []byte("request 3")},
	}
	for i, w := range want {
		g := items[i]
		if g.CustomID != w.CustomID || g.Done != w.Done || g.Answer != w.Answer || g.InputTokens != w.InputTokens ||
			g.OutputTokens != w.OutputTokens || g.Error != w.Error || !slices.Equal(g.Members, w.Members) {
			t.Errorf("item %d = %+v, want %+v", i, g, w)
		}
		if (g.Request == nil) != (w.Request == nil) || !bytes.Equal(g.Request, w.Request) {
			t.Errorf("item %s request = %q, want %q: a stored result's request is dropped, a waiting one's kept", g.CustomID, g.Request, w.Request)
		}
	}
	if other := batchItems(t, s, "b2"); other[0].Done || string(other[0].Request) != "request of b2" {
		t.Errorf("an item of another batch with the same custom id changed: %+v", other[0])
	}
	if got := batchMembers(t, s, batchModel, "m1")["m1"]; got.Answer != "the answer ✓" || !got.Done {
		t.Errorf("BatchMembers(m1) = %+v, want the stored answer", got)
	}
}

// Two stores on one database, as two processes, create batches at once:
// every batch, item and member is recorded, none lost or mixed up.
func testConcurrentCreateBatchTwoStoresOnOneDatabase(t *testing.T, b Backend) {
	where := b.Fresh(t)
	stores := [2]store.Store{open(t, b, where), open(t, b, where)}
	const workers, perWorker, itemsPerBatch = 8, 4, 50
	var wg sync.WaitGroup
	for w := range workers {
		s := stores[w%2]
		wg.Go(func() {
			for n := range perWorker {
				id := fmt.Sprintf("w%d-b%d", w, n)
				var items []store.BatchItem
				for i := range itemsPerBatch {
					items = append(items, store.BatchItem{CustomID: fmt.Sprint(i), Request: []byte(id),
						Members: []string{fmt.Sprintf("%s-%d-a", id, i), fmt.Sprintf("%s-%d-b", id, i)}})
				}
				if err := s.CreateBatch(context.Background(), store.Batch{ID: id, Model: batchModel}, items); err != nil {
					t.Errorf("CreateBatch(%s): %v", id, err)
				}
			}
		})
	}
	wg.Wait()
	for n, s := range stores {
		if got := batches(t, s, true); len(got) != workers*perWorker {
			t.Errorf("store %d sees %d batches, want %d", n, len(got), workers*perWorker)
		}
	}
	var members []string
	for w := range workers {
		for n := range perWorker {
			id := fmt.Sprintf("w%d-b%d", w, n)
			items := batchItems(t, stores[(w+1)%2], id)
			if len(items) != itemsPerBatch {
				t.Errorf("batch %s has %d items, want %d", id, len(items), itemsPerBatch)
				continue
			}
			for i, it := range items {
				if it.CustomID != fmt.Sprint(i) || string(it.Request) != id || len(it.Members) != 2 {
					t.Errorf("batch %s item %d = %+v", id, i, it)
					break
				}
				members = append(members, it.Members...)
			}
		}
	}
	found := batchMembers(t, stores[0], batchModel, members...)
	if len(found) != workers*perWorker*itemsPerBatch*2 {
		t.Errorf("BatchMembers found %d members, want %d", len(found), workers*perWorker*itemsPerBatch*2)
	}
	for _, m := range members {
		if it := found[m]; !strings.HasPrefix(m, it.BatchID+"-"+it.CustomID+"-") {
			t.Errorf("member %s found in batch %s item %s", m, it.BatchID, it.CustomID)
			break
		}
	}
}

// An answer's finish and cached tokens come back as stored, and a run's
// totals count the refused and cut answers and the cached input.
func testFinishAndCachedTokensRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	run := store.EvalRun{ID: "20261201-ffff", Dataset: "d.jsonl", Models: []string{"m"}, Params: map[string]any{"repeat": 1}, CreatedAt: time.Now()}
	if err := s.StartRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for line, finish := range []string{"", "refusal", "length", "content_filter"} {
		k := "finish-" + finish
		if err := s.SaveEvalResult(ctx, store.EvalResult{Key: k, Model: "m", InputTokens: 1500, CacheReadTokens: 1024, CacheWriteTokens: 100,
			OutputTokens: 300, CostUSD: 0.002, Request: []byte(`{}`), Answer: "a " + finish, Finish: finish}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRunResults(ctx, []store.RunResult{{RunID: run.ID, Model: "m", Item: k, Line: line + 1, Key: k, Pass: true, Score: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.EvalResults(ctx, []string{"finish-refusal"})
	if r := got["finish-refusal"]; err != nil || r.Finish != "refusal" || r.CacheReadTokens != 1024 || r.CacheWriteTokens != 100 || r.Answer != "a refusal" {
		t.Errorf("EvalResults = %+v, %v", got, err)
	}
	tot, err := s.RunTotals(ctx, run.ID, "m")
	if err != nil || tot.Refused != 1 || tot.Cut != 2 || tot.CacheReadTokens != 4*1024 {
		t.Errorf("totals %+v, %v: want 1 refused, 2 cut, 4,096 cached", tot, err)
	}
	finishes := map[int]string{}
	for row, err := range s.RunRows(ctx, run.ID, []string{"m"}, false) {
		if err != nil {
			t.Fatal(err)
		}
		finishes[row.Line] = row.Finish
		if row.CacheReadTokens != 1024 {
			t.Errorf("line %d: %d cached", row.Line, row.CacheReadTokens)
		}
	}
	if finishes[2] != "refusal" || finishes[3] != "length" || finishes[1] != "" {
		t.Errorf("finishes %v", finishes)
	}
}

// A result that ended in error keeps the request it would have sent, for
// its report; an answered result shows its answer's request, and a failed
// one that is answered on a rerun of the same run id shows the answer's.
func testFailedResultKeepsItsRequest(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	run := store.EvalRun{ID: "20261201-eeee", Dataset: "d.jsonl", Models: []string{"m"}, Params: map[string]any{"repeat": 1}, CreatedAt: time.Now()}
	if err := s.StartRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	asked := []byte(`{"messages":[{"role":"user","content":"too long"}]}`)
	if err := s.SaveEvalResult(ctx, store.EvalResult{Key: "ok", Model: "m", Request: []byte(`{"answered":true}`), Answer: "4"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRunResults(ctx, []store.RunResult{
		{RunID: run.ID, Model: "m", Item: "a", Line: 1, Key: "failed", Error: "request needs 813 tokens", Request: asked},
		{RunID: run.ID, Model: "m", Item: "b", Line: 2, Key: "ok", Pass: true, Score: 1},
		{RunID: run.ID, Model: "m", Item: "c", Line: 3, Key: "unchecked", Error: "nothing to check"},
	}); err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for row, err := range s.RunRows(ctx, run.ID, []string{"m"}, true) {
		if err != nil {
			t.Fatal(err)
		}
		got[row.Line] = string(row.Request)
	}
	if got[1] != string(asked) || got[2] != `{"answered":true}` || got[3] != "" {
		t.Errorf("requests by line %v", got)
	}
}

// Token factors saved by several stores fold into a mean weighted by
// their samples, the weight capped.
func testTokenFactorsAreWeightedMeans(t *testing.T, b Backend) {
	ctx := context.Background()
	where := b.Fresh(t)
	s1, s2 := open(t, b, where), open(t, b, where)
	if _, ok, err := s1.TokenFactor(ctx, "anthropic:claude-sonnet-5"); ok || err != nil {
		t.Fatalf("a factor before any was saved: %v %v", ok, err)
	}
	if err := s1.SaveTokenFactor(ctx, store.TokenFactor{Model: "anthropic:claude-sonnet-5", Factor: 1.2, Samples: 10}); err != nil {
		t.Fatal(err)
	}
	if err := s2.SaveTokenFactor(ctx, store.TokenFactor{Model: "anthropic:claude-sonnet-5", Factor: 1.5, Samples: 30}); err != nil {
		t.Fatal(err)
	}
	f, ok, err := s1.TokenFactor(ctx, "anthropic:claude-sonnet-5")
	if !ok || err != nil || math.Abs(f.Factor-1.425) > 1e-9 || f.Samples != 40 {
		t.Errorf("factor %+v %v %v, want 1.425 over 40", f, ok, err)
	}
	if err := s2.SaveTokenFactor(ctx, store.TokenFactor{Model: "anthropic:claude-sonnet-5", Factor: 1.4, Samples: 5000}); err != nil {
		t.Fatal(err)
	}
	if f, _, _ := s1.TokenFactor(ctx, "anthropic:claude-sonnet-5"); f.Samples != store.MaxFactorSamples {
		t.Errorf("samples %d, want the cap %d", f.Samples, store.MaxFactorSamples)
	}
	if err := s1.SaveTokenFactor(ctx, store.TokenFactor{Model: "m", Factor: 0, Samples: 1}); err == nil {
		t.Error("a factor of 0 was saved")
	}
}

// A result's per-metric grades come back as they were stored, in order;
// a result with none comes back with none, and a rerun of the same run
// replaces them.
func testMetricScoresRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	run := store.EvalRun{ID: "20261201-dddd", Dataset: "d.jsonl", Models: []string{"m"}, Params: map[string]any{"repeat": 1}, CreatedAt: time.Now()}
	if err := s.StartRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	graded := []store.MetricScore{{Name: "bias", Pass: false, Score: 0.5}, {Name: "accuracy", Pass: true, Score: 1}}
	if err := s.SaveRunResults(ctx, []store.RunResult{
		{RunID: run.ID, Model: "m", Item: "a", Line: 1, Key: "k1", Pass: false, Score: 0.75, Metrics: graded},
		{RunID: run.ID, Model: "m", Item: "b", Line: 2, Key: "k2", Pass: true, Score: 1},
	}); err != nil {
		t.Fatal(err)
	}
	rows := func() map[int][]store.MetricScore {
		got := map[int][]store.MetricScore{}
		for row, err := range s.RunRows(ctx, run.ID, []string{"m"}, false) {
			if err != nil {
				t.Fatal(err)
			}
			got[row.Line] = row.Metrics
		}
		return got
	}
	got := rows()
	if !slices.Equal(got[1], graded) || got[2] != nil {
		t.Errorf("metrics by line %+v, want %+v on line 1 and none on line 2", got, graded)
	}
	regraded := []store.MetricScore{{Name: "bias", Pass: true, Score: 1}}
	if err := s.SaveRunResults(ctx, []store.RunResult{{RunID: run.ID, Model: "m", Item: "a", Line: 1, Key: "k1", Pass: true, Score: 1, Metrics: regraded}}); err != nil {
		t.Fatal(err)
	}
	if got := rows(); !slices.Equal(got[1], regraded) {
		t.Errorf("after a rerun, line 1 has %+v, want %+v", got[1], regraded)
	}
}
