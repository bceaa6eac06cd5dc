package forgeapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/forgeapi"
	"github.com/digest-cli/digest/internal/forgeapi/forgetest"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// sha is a full commit hash, distinct for each n.
func sha(n int) string { return fmt.Sprintf("%040x", 0xc0ffee000+n) }

var githubRepo = forge.Forge{Kind: forge.GitHub, Base: "https://github.com/spf13/cobra"}

var githubToken = forgeapi.Token{Value: forgetest.Token, Var: "GITHUB_TOKEN"}

// openStore opens the SQLite database at path, closing it when the test ends.
func openStore(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// logBuffer is a log that keeps every line, debug ones included.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newGitHubClient is a client of fake for githubRepo over st.
func newGitHubClient(t *testing.T, fake *forgetest.GitHub, st store.Store, log *slog.Logger, o forgeapi.Options) *forgeapi.Client {
	t.Helper()
	o.APIURL = fake.URL
	if o.RPM == 0 {
		o.RPM = 1e6 // pacing is tested on its own: TestRequestsArePacedByRPM
	}
	c, err := forgeapi.New(githubRepo, githubToken, st, log, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func lookup(t *testing.T, c *forgeapi.Client, commits ...string) map[string]forgeapi.Info {
	t.Helper()
	got, err := c.Lookup(context.Background(), commits)
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	return got
}

// noFaults fails the test if the fake refused a request for the client's fault.
func noFaults(t *testing.T, faults []string) {
	t.Helper()
	if len(faults) > 0 {
		t.Errorf("the fake refused the client's requests: %q", faults)
	}
}

func TestLookupGitHubNamesPullRequestsAndLogins(t *testing.T) {
	commits := map[string]forgetest.Commit{
		sha(1): {Login: "committer", PRs: []forgetest.PR{{Number: 12, Title: "Add completions for fish", Login: "octocat", Labels: []string{"enhancement", "cli"}}}},
		sha(2): {Login: "hubot"},
		sha(3): {},
		sha(5): {Login: "pusher", PRs: []forgetest.PR{{Number: 30, Title: "still open", Login: "drafter", Open: true}}},
		sha(6): {PRs: []forgetest.PR{
			{Number: 40, Title: "Backport to 1.x", Login: "backporter", Base: "release-1.x"},
			{Number: 41, Title: "The change itself", Login: "author", Base: "main"},
		}},
		sha(7): {PRs: []forgetest.PR{
			{Number: 50, Title: "first", Login: "one", Base: "release-1.x"},
			{Number: 51, Title: "second", Login: "two", Base: "release-2.x"},
		}},
		sha(8): {PRs: []forgetest.PR{{Number: 60, Title: "Bump golang.org/x/net", Login: "dependabot[bot]", Labels: []string{"dependencies"}}}},
	}
	fake := forgetest.NewGitHub(t, "spf13/cobra", commits)
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	c := newGitHubClient(t, fake, st, nil, forgeapi.Options{})
	got := lookup(t, c, sha(1), sha(2), sha(3), sha(4), sha(5), sha(6), sha(7), sha(8))
	want := map[string]forgeapi.Info{
		sha(1): {Login: "octocat", PR: 12, PRTitle: "Add completions for fish", PRURL: "https://github.com/spf13/cobra/pull/12", Labels: []string{"enhancement", "cli"}, Known: true},
		sha(2): {Login: "hubot", Known: true},
		sha(3): {},
		sha(4): {}, // GitHub knows no such commit (422)
		sha(5): {Login: "pusher", Known: true},
		sha(6): {Login: "author", PR: 41, PRTitle: "The change itself", PRURL: "https://github.com/spf13/cobra/pull/41", Known: true},
		sha(7): {Login: "one", PR: 50, PRTitle: "first", PRURL: "https://github.com/spf13/cobra/pull/50", Known: true},
		sha(8): {Login: "dependabot[bot]", PR: 60, PRTitle: "Bump golang.org/x/net", PRURL: "https://github.com/spf13/cobra/pull/60", Labels: []string{"dependencies"}, Known: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Lookup:\n got %+v\nwant %+v", got, want)
	}
	// The commit itself is asked for only when no request was merged.
	for n, asked := range map[int]int{1: 1, 2: 2, 3: 2, 4: 1, 5: 2, 6: 1, 7: 1, 8: 1} {
		if got := fake.Asked(sha(n)); got != asked {
			t.Errorf("commit %d asked %d times, want %d", n, got, asked)
		}
	}
	noFaults(t, fake.Faults())
}

func TestLookupAsksNoCommitTwice(t *testing.T) {
	commits := map[string]forgetest.Commit{}
	var all []string
	for n := range 20 {
		all = append(all, sha(n))
		if n%2 == 0 {
			commits[sha(n)] = forgetest.Commit{PRs: []forgetest.PR{{Number: 100 + n, Title: fmt.Sprint("change ", n), Login: "ada"}}}
		} else {
			commits[sha(n)] = forgetest.Commit{Login: "grace"}
		}
	}
	fake := forgetest.NewGitHub(t, "spf13/cobra", commits)
	path := filepath.Join(t.TempDir(), "digest.db")
	st := openStore(t, path)
	c := newGitHubClient(t, fake, st, nil, forgeapi.Options{Concurrency: 4})
	// A commit named twice in one call is asked once, and keyed both ways.
	first := lookup(t, c, append(all, sha(0), strings.ToUpper(sha(1)))...)
	if len(first) != 21 || first[strings.ToUpper(sha(1))].Login != "grace" {
		t.Fatalf("first lookup: %d answers, %+v for the upper-case hash", len(first), first[strings.ToUpper(sha(1))])
	}
	asked := fake.Requests()
	if asked != 30 { // 10 with a request, 10 without (two requests each)
		t.Errorf("first lookup made %d requests, want 30", asked)
	}
	if again := lookup(t, c, all...); !reflect.DeepEqual(again, without(first, strings.ToUpper(sha(1)))) || fake.Requests() != asked {
		t.Errorf("second lookup made %d requests, want none", fake.Requests()-asked)
	}
	if s := c.Stats(); s.Cached != 20 || s.Asked != 20 || s.Requests != 30 {
		t.Errorf("Stats = %+v, want 20 cached, 20 asked, 30 requests", s)
	}
	// Another process: a new store and client over the same file.
	other := newGitHubClient(t, fake, openStore(t, path), nil, forgeapi.Options{})
	if again := lookup(t, other, all...); len(again) != 20 || fake.Requests() != asked {
		t.Errorf("a new client over the same database made %d requests, want none", fake.Requests()-asked)
	}
	noFaults(t, fake.Faults())
}

// without is m less keys.
func without(m map[string]forgeapi.Info, keys ...string) map[string]forgeapi.Info {
	out := map[string]forgeapi.Info{}
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

func TestAnswersNamingNoRequestExpire(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{
		sha(1): {PRs: []forgetest.PR{{Number: 1, Title: "merged", Login: "ada"}}},
		sha(2): {Login: "grace"},
	})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	c := newGitHubClient(t, fake, st, nil, forgeapi.Options{UnknownTTL: 200 * time.Millisecond})
	lookup(t, c, sha(1), sha(2), sha(3))
	before := fake.Requests()
	time.Sleep(300 * time.Millisecond)
	// sha(2) has been merged through a request since.
	fake.SetCommit(sha(2), forgetest.Commit{Login: "grace", PRs: []forgetest.PR{{Number: 2, Title: "merged later", Login: "grace"}}})
	got := lookup(t, c, sha(1), sha(2), sha(3))
	if got[sha(2)].PR != 2 || got[sha(1)].PR != 1 {
		t.Errorf("after expiry: %+v", got)
	}
	// sha(2): its requests and itself, then its requests; sha(3), which
	// GitHub does not know: its requests, twice.
	if fake.Asked(sha(1)) != 1 || fake.Asked(sha(2)) != 3 || fake.Asked(sha(3)) != 2 {
		t.Errorf("asked %d, %d, %d times; want the merged one once, the others again", fake.Asked(sha(1)), fake.Asked(sha(2)), fake.Asked(sha(3)))
	}
	if fake.Requests()-before != 2 {
		t.Errorf("the second lookup made %d requests, want 2", fake.Requests()-before)
	}
}

func TestPrimaryRateLimitPausesUntilTheReset(t *testing.T) {
	var commits []string
	known := map[string]forgetest.Commit{}
	for n := range 5 {
		commits = append(commits, sha(n))
		known[sha(n)] = forgetest.Commit{PRs: []forgetest.PR{{Number: n + 1, Title: "t", Login: "ada"}}}
	}
	fake := forgetest.NewGitHub(t, "spf13/cobra", known)
	fake.SetLimit(3, time.Second)
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{Concurrency: 1})
	got := lookup(t, c, commits...)
	if len(got) != 5 {
		t.Errorf("%d answers, want 5", len(got))
	}
	// The third answer says nothing is left: the fourth request waits for
	// the reset instead of hearing a 403.
	if fake.Throttled() != 0 {
		t.Errorf("%d requests were refused by the limit, want none", fake.Throttled())
	}
	noFaults(t, fake.Faults())
}

func TestPrimaryRateLimitRefusalWaitsForTheReset(t *testing.T) {
	for _, status := range []int{403, 429} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{sha(1): {PRs: []forgetest.PR{{Number: 7, Title: "t", Login: "ada"}}}})
			fake.SetLimitStatus(status)
			fake.Exhaust(500 * time.Millisecond)
			c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{})
			start := time.Now()
			got := lookup(t, c, sha(1))
			if got[sha(1)].PR != 7 {
				t.Errorf("answer %+v", got[sha(1)])
			}
			if fake.Throttled() != 1 || fake.Requests() != 2 {
				t.Errorf("%d refused of %d requests, want 1 of 2: the client must wait for the reset", fake.Throttled(), fake.Requests())
			}
			if d := time.Since(start); d < 500*time.Millisecond {
				t.Errorf("answered after %s, before the reset", d)
			}
			if s := c.Stats(); s.RateLimited != 1 {
				t.Errorf("Stats = %+v, want one rate limited", s)
			}
		})
	}
}

func TestRateLimitLongerThanMaxWaitStops(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{sha(1): {}, sha(2): {}, sha(3): {}})
	fake.Exhaust(time.Hour)
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	c := newGitHubClient(t, fake, st, nil, forgeapi.Options{MaxWait: 2 * time.Second})
	start := time.Now()
	got, err := c.Lookup(context.Background(), []string{sha(1), sha(2), sha(3)})
	var we *engine.WaitError
	if err == nil || !errors.As(err, &we) {
		t.Fatalf("Lookup = %v, %v; want a wait error", got, err)
	}
	msg := err.Error()
	for _, want := range []string{"GitHub API", "GITHUB_TOKEN", "rate limit (5000 requests, core)", "spent until", "--max-wait 2s", "Try:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, forgetest.Token) || strings.Contains(msg, "\n") {
		t.Errorf("error %q holds the token or a line break", msg)
	}
	if len(got) != 0 || fake.Requests() != 1 || time.Since(start) > time.Second {
		t.Errorf("%d answers, %d requests in %s: want one request and a stop at once", len(got), fake.Requests(), time.Since(start))
	}
}

func TestAnswersBeforeAStopAreStored(t *testing.T) {
	commits := map[string]forgetest.Commit{}
	var all []string
	for n := range 4 {
		all = append(all, sha(n))
		commits[sha(n)] = forgetest.Commit{PRs: []forgetest.PR{{Number: n + 1, Title: "t", Login: "ada"}}}
	}
	fake := forgetest.NewGitHub(t, "spf13/cobra", commits)
	fake.SetLimit(2, time.Hour)
	path := filepath.Join(t.TempDir(), "digest.db")
	c := newGitHubClient(t, fake, openStore(t, path), nil, forgeapi.Options{Concurrency: 1, MaxWait: time.Second})
	got, err := c.Lookup(context.Background(), all)
	if err == nil || len(got) != 2 {
		t.Fatalf("Lookup = %d answers, %v; want the two the limit let through, and its error", len(got), err)
	}
	// A rerun, once the limit has reset, asks only for the other two.
	fake2 := forgetest.NewGitHub(t, "spf13/cobra", commits)
	again := lookup(t, newGitHubClient(t, fake2, openStore(t, path), nil, forgeapi.Options{}), all...)
	if len(again) != 4 || fake2.Requests() != 2 {
		t.Errorf("rerun: %d answers in %d requests, want 4 in 2", len(again), fake2.Requests())
	}
	for k := range got {
		if fake2.Asked(k) != 0 {
			t.Errorf("%s, answered before the stop, was asked again", k)
		}
	}
}

func TestSecondaryRateLimitHonoursRetryAfter(t *testing.T) {
	for _, status := range []int{403, 429} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{sha(1): {PRs: []forgetest.PR{{Number: 7, Title: "t", Login: "ada"}}}})
			fake.SecondaryLimit(1, time.Second, status)
			c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{})
			start := time.Now()
			if got := lookup(t, c, sha(1)); got[sha(1)].PR != 7 {
				t.Errorf("answer %+v", got[sha(1)])
			}
			if d := time.Since(start); d < time.Second || fake.Requests() != 2 {
				t.Errorf("%d requests in %s: want the retry after retry-after's second", fake.Requests(), d)
			}
		})
	}
}

func TestSecondaryRateLimitWithoutRetryAfterWaitsAMinute(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{sha(1): {}})
	fake.SecondaryLimit(1, 0, 403)
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{MaxWait: 10 * time.Second})
	_, err := c.Lookup(context.Background(), []string{sha(1)})
	if err == nil || !strings.Contains(err.Error(), "secondary rate limit") || !strings.Contains(err.Error(), "wait 1m0s") {
		t.Errorf("Lookup error %v, want a secondary limit's minute, longer than --max-wait", err)
	}
	if fake.Requests() != 1 {
		t.Errorf("%d requests, want 1", fake.Requests())
	}
}

func TestBadTokenStopsAfterOneRequest(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{sha(1): {}, sha(2): {}, sha(3): {}})
	fake.SetToken("ghp_anotherTokenThanTheOneTheClientSends00")
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{})
	got, err := c.Lookup(context.Background(), []string{sha(1), sha(2), sha(3)})
	if err == nil {
		t.Fatalf("Lookup = %v, want an error", got)
	}
	want := "GitHub API (" + strings.TrimPrefix(fake.URL, "http://") + "): HTTP 401: Bad credentials. Try: a valid token in GITHUB_TOKEN (GitHub refused it; it must be current and may read spf13/cobra)"
	if err.Error() != want {
		t.Errorf("error\n %q\nwant\n %q", err, want)
	}
	if fake.Requests() != 1 || len(got) != 0 {
		t.Errorf("%d requests, %d answers; want one request, none", fake.Requests(), len(got))
	}
}

func TestForbiddenWithoutRateLimitIsTheTokensFault(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{sha(1): {}})
	fake.FailNext(1, 403)
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{})
	_, err := c.Lookup(context.Background(), []string{sha(1)})
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || !strings.Contains(err.Error(), "Try: a token in GITHUB_TOKEN that may read spf13/cobra") {
		t.Errorf("Lookup error %v, want the token's permissions named", err)
	}
	if fake.Requests() != 1 {
		t.Errorf("%d requests, want 1: a permission is not waited out", fake.Requests())
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{sha(1): {PRs: []forgetest.PR{{Number: 3, Title: "t", Login: "ada"}}}})
	fake.FailNext(2, 502)
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{})
	if got := lookup(t, c, sha(1)); got[sha(1)].PR != 3 {
		t.Errorf("answer %+v", got[sha(1)])
	}
	if fake.Requests() != 3 {
		t.Errorf("%d requests, want 3", fake.Requests())
	}
}

func TestFailedCommitsLeaveTheOthersAnswered(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{
		sha(1): {PRs: []forgetest.PR{{Number: 1, Title: "t", Login: "ada"}}},
		sha(2): {PRs: []forgetest.PR{{Number: 2, Title: "t", Login: "ada"}}},
	})
	fake.FailNext(1, 400)
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{Concurrency: 1})
	got, err := c.Lookup(context.Background(), []string{sha(1), sha(2)})
	var fe *forgeapi.FailedError
	if !errors.As(err, &fe) || fe.Failed != 1 || fe.Asked != 2 || len(got) != 1 || got[sha(2)].PR != 2 {
		t.Fatalf("Lookup = %+v, %v; want sha(2) answered and one failure", got, err)
	}
	want := "GitHub API (" + strings.TrimPrefix(fake.URL, "http://") + "): 1 of 2 commits could not be looked up (the first: HTTP 400: Bad Request); the other answers are stored, and a rerun asks again for these"
	if err.Error() != want {
		t.Errorf("error\n %q\nwant\n %q", err, want)
	}
	// The failure was not stored: asked again, it is answered.
	if again := lookup(t, c, sha(1), sha(2)); again[sha(1)].PR != 1 || fake.Requests() != 3 || fake.Asked(sha(2)) != 1 {
		t.Errorf("rerun: %+v after %d requests, sha(2) asked %d times; want one more request", again, fake.Requests(), fake.Asked(sha(2)))
	}
}

func TestTokenIsNeverStoredLoggedOrShown(t *testing.T) {
	commits := map[string]forgetest.Commit{}
	var all []string
	for n := range 6 {
		all = append(all, sha(n))
		commits[sha(n)] = forgetest.Commit{Login: "ada", PRs: []forgetest.PR{{Number: n + 1, Title: "t", Login: "ada", Open: n%2 == 0}}}
	}
	fake := forgetest.NewGitHub(t, "spf13/cobra", commits)
	fake.FailNext(1, 500)
	fake.SecondaryLimit(1, time.Second, 403)
	dir := t.TempDir()
	path := filepath.Join(dir, "digest.db")
	var log logBuffer
	st := openStore(t, path)
	c := newGitHubClient(t, fake, st, log.logger(), forgeapi.Options{})
	lookup(t, c, all...)
	// The token's own printing shows the variable alone.
	log.logger().Info("token", "token", githubToken)
	shown := fmt.Sprint(githubToken) + fmt.Sprintf("%v %+v %#v %s", githubToken, githubToken, githubToken, githubToken)
	// A refused token's error.
	fake.SetToken("ghp_anotherTokenThanTheOneTheClientSends00")
	_, err := newGitHubClient(t, fake, st, log.logger(), forgeapi.Options{}).Lookup(context.Background(), []string{sha(99)})
	if err == nil {
		t.Fatal("a refused token gave no error")
	}
	st.Close()
	if !strings.Contains(log.String(), "retrying") {
		t.Errorf("the log holds no retry: the test logged too little to tell\n%s", log.String())
	}
	texts := map[string]string{"the log": log.String(), "the error": err.Error(), "the token printed": shown}
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(f)] = string(data)
	}
	for what, text := range texts {
		if strings.Contains(strings.ToLower(text), strings.ToLower(forgetest.Token)) {
			t.Errorf("%s holds the token", what)
		}
	}
	if !strings.Contains(shown, "GITHUB_TOKEN") {
		t.Errorf("the token printed as %q, want its variable", shown)
	}
}

func TestConcurrentLookupsStayWithinConcurrency(t *testing.T) {
	commits := map[string]forgetest.Commit{}
	var all []string
	for n := range 60 {
		all = append(all, sha(n))
		commits[sha(n)] = forgetest.Commit{PRs: []forgetest.PR{{Number: n + 1, Title: fmt.Sprint("change ", n), Login: "ada"}}}
	}
	fake := forgetest.NewGitHub(t, "spf13/cobra", commits)
	fake.SetDelay(5 * time.Millisecond)
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{Concurrency: 6, RPM: 1e6})
	// Two callers at once, on halves of the history.
	var wg sync.WaitGroup
	results := make([]map[string]forgeapi.Info, 2)
	for i := range 2 {
		wg.Go(func() { results[i] = lookup(t, c, all[i*30:(i+1)*30]...) })
	}
	wg.Wait()
	for i, r := range results {
		if len(r) != 30 {
			t.Errorf("caller %d got %d answers, want 30", i, len(r))
		}
		for k, info := range r {
			if info.PR == 0 || info.PRTitle != fmt.Sprint("change ", info.PR-1) {
				t.Errorf("%s: %+v", k, info)
			}
		}
	}
	if fake.Peak() > 6 || fake.Peak() < 2 {
		t.Errorf("peak of %d requests in flight, want 2 to 6", fake.Peak())
	}
	for _, s := range all {
		if fake.Asked(s) != 1 {
			t.Errorf("%s asked %d times", s, fake.Asked(s))
		}
	}
	noFaults(t, fake.Faults())
}

func TestLookupRefusesWhatIsNoCommitHash(t *testing.T) {
	fake := forgetest.NewGitHub(t, "spf13/cobra", nil)
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{})
	for _, bad := range []string{"abc1234", sha(1) + "0", strings.Repeat("g", 40), "../../etc/passwd", ""} {
		if _, err := c.Lookup(context.Background(), []string{sha(1), bad}); err == nil || !strings.Contains(err.Error(), "not a full commit hash") {
			t.Errorf("Lookup(%q) = %v, want a refusal", bad, err)
		}
	}
	if fake.Requests() != 0 {
		t.Errorf("%d requests, want none", fake.Requests())
	}
}

func TestHostileAnswersAreMadeSafe(t *testing.T) {
	title := "Fix \x1b[31mred\x1b[0m\nand more " + strings.Repeat("é", 1000)
	fake := forgetest.NewGitHub(t, "spf13/cobra", map[string]forgetest.Commit{
		sha(1): {PRs: []forgetest.PR{{Number: 9, Title: title, Login: "not a login", Labels: []string{"ok", "bad\u202elabel", ""}}}},
	})
	fake.SetWeb("https://evil.example")
	c := newGitHubClient(t, fake, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, forgeapi.Options{})
	info := lookup(t, c, sha(1))[sha(1)]
	if strings.ContainsAny(info.PRTitle, "\x1b\n") || len(info.PRTitle) > 1024 || !strings.HasPrefix(info.PRTitle, `Fix \x1b[31mred\x1b[0m and more é`) {
		t.Errorf("title %q", info.PRTitle)
	}
	if info.PRURL != "https://github.com/spf13/cobra/pull/9" {
		t.Errorf("URL %q, want the repository's own page for #9", info.PRURL)
	}
	if info.Login != "" || !reflect.DeepEqual(info.Labels, []string{"ok", `bad\u202elabel`}) {
		t.Errorf("login %q, labels %q", info.Login, info.Labels)
	}
}

func TestNewRefusesWhatItCannotAsk(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	for name, tt := range map[string]struct {
		f    forge.Forge
		tok  forgeapi.Token
		o    forgeapi.Options
		want string
	}{
		"no token":  {githubRepo, forgeapi.Token{Var: "GITHUB_TOKEN"}, forgeapi.Options{}, "Try: export GITHUB_TOKEN=<a token that may read spf13/cobra>"},
		"gitea":     {forge.Forge{Kind: forge.Gitea, Base: "https://codeberg.org/a/b"}, githubToken, forgeapi.Options{}, "know GitHub and GitLab, not gitea"},
		"bad url":   {githubRepo, githubToken, forgeapi.Options{APIURL: "ftp://example.com"}, "is not an http(s) URL"},
		"no repo":   {forge.Forge{Kind: forge.GitHub, Base: "https://github.com"}, githubToken, forgeapi.Options{}, "is not a repository's page"},
		"user info": {githubRepo, githubToken, forgeapi.Options{APIURL: "ftp://user:secret@example.com"}, "ftp://example.com"},
	} {
		_, err := forgeapi.New(tt.f, tt.tok, st, nil, tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: New error %v, want it to say %q", name, err, tt.want)
		}
	}
}

func TestTokenFor(t *testing.T) {
	env := map[string]string{"GH_TOKEN": "gh", "CI_JOB_TOKEN": "job"}
	getenv := func(k string) string { return env[k] }
	if tok, ok := forgeapi.TokenFor(forge.GitHub, getenv); !ok || tok != (forgeapi.Token{Value: "gh", Var: "GH_TOKEN"}) {
		t.Errorf("GitHub: %#v %v", tok.Var, ok)
	}
	env["GITHUB_TOKEN"] = "first"
	if tok, _ := forgeapi.TokenFor(forge.GitHub, getenv); tok.Var != "GITHUB_TOKEN" {
		t.Errorf("GitHub: %s, want GITHUB_TOKEN first", tok)
	}
	if tok, ok := forgeapi.TokenFor(forge.GitLab, getenv); !ok || tok.Var != "CI_JOB_TOKEN" {
		t.Errorf("GitLab: %s %v", tok, ok)
	}
	if _, ok := forgeapi.TokenFor(forge.Bitbucket, getenv); ok {
		t.Error("a Bitbucket token was found")
	}
}
