// Package forgetest serves fakes of the forges' REST APIs for tests:
// GitHub's (NewGitHub) and GitLab's v4 (NewGitLab), over real HTTP, in
// their documented wire formats: the JSON shapes, the rate-limit headers,
// the error bodies and statuses, the primary and secondary limits. Each
// refuses what its forge refuses (a wrong token, a malformed commit hash,
// a request without a User-Agent), and a little more, so that a client
// is held to the documented form: a GitHub request must send the API
// version and Accept headers GitHub documents, which GitHub itself would
// default. What a fake refused for the client's fault is listed by
// Faults, so a test can insist on none.
//
// Both fakes count what they served (Requests, Asked for one commit,
// Throttled, Peak requests in flight) and take what a test changes at
// any time: SetCommit, SetToken, SetWeb, SetDefaultBranch, SetLimit and
// Exhaust for the primary rate limit, FailNext for server errors,
// SetDelay; GitHub's adds SecondaryLimit and SetLimitStatus, GitLab's
// SetJobToken. A test of digest uses one as
//
//	fake := forgetest.NewGitHub(t, "owner/name", map[string]forgetest.Commit{
//		hash: {PRs: []forgetest.PR{{Number: 12, Title: "Add X", Login: "ada"}}},
//	})
//	// the client's API URL: fake.URL; its token: forgetest.Token
//	... run ...
//	if fake.Requests() != 0 { ... } // a rerun asks nothing
package forgetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// PR is a pull request (GitHub) or merge request (GitLab) that holds a
// commit.
type PR struct {
	// Number is the pull request's number, or the merge request's iid.
	Number int
	Title  string
	// Login is its author's login (GitHub's user.login, GitLab's
	// author.username); "" sends a null user, as for a deleted account.
	Login  string
	Labels []string
	// Base is the branch it was merged into (base.ref, target_branch);
	// "" is the repository's default branch.
	Base string
	// Open leaves it unmerged: merged_at is null, the state open.
	Open bool
}

// Commit is what a fake knows of one commit.
type Commit struct {
	// Login is the commit author's account (GitHub's author.login); ""
	// sends null, as GitHub does for an email it links to no account.
	Login string
	// PRs are the pull requests that hold it, in the order the API lists
	// them.
	PRs []PR
}

// Token is the token a fake accepts unless told another: long enough to
// pass for a real one, so that scrubbing it is tested too.
const Token = "ghp_forgetestFAKEtoken0123456789abcdefXYZ"

// server is what both fakes share: the counters, the faults, the
// injected failures and the delay.
type server struct {
	srv *httptest.Server

	mu        sync.Mutex
	commits   map[string]Commit
	requests  int
	throttled int
	asked     map[string]int
	inFlight  int
	peak      int
	faults    []string
	failures  []int
	delay     time.Duration
	// The primary limit: limit requests per window, remaining of them
	// until reset.
	limit     int
	window    time.Duration
	remaining int
	reset     time.Time
	// What the fake serves as: the token it takes, where its pages are,
	// the default branch.
	token, jobToken, web, branch string
}

func newServer(t testing.TB, web string, commits map[string]Commit, h http.Handler) *server {
	s := &server{commits: map[string]Commit{}, asked: map[string]int{}, limit: 5000, window: time.Hour,
		token: Token, web: web, branch: "main"}
	for sha, c := range commits {
		s.commits[strings.ToLower(sha)] = c
	}
	s.remaining, s.reset = s.limit, time.Now().Add(s.window)
	s.srv = httptest.NewServer(h)
	t.Cleanup(s.srv.Close)
	return s
}

// Requests counts every request received, refused ones included.
func (s *server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Asked counts the requests that named commit sha.
func (s *server) Asked(sha string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[strings.ToLower(sha)]
}

// Throttled counts the requests answered with a rate-limit error, primary
// or secondary.
func (s *server) Throttled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.throttled
}

// Peak is the most requests that were in flight at once.
func (s *server) Peak() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Faults lists the requests refused for the client's fault (a missing
// header, a malformed hash, a wrong method), each with why.
func (s *server) Faults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.faults...)
}

// SetToken sets the token the fake accepts (forgetest.Token until set).
func (s *server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetWeb sets where the repository's pages are, as the answers' links
// give them (https://github.com, https://gitlab.com until set).
func (s *server) SetWeb(web string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.web = web
}

// SetDefaultBranch sets the repository's default branch ("main" until
// set), which a request merged without a Base is merged into.
func (s *server) SetDefaultBranch(branch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.branch = branch
}

// settings reads what the fake serves as.
func (s *server) settings() (token, jobToken, web, branch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token, s.jobToken, s.web, s.branch
}

// SetCommit adds or replaces what the fake knows of commit sha.
func (s *server) SetCommit(sha string, c Commit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits[strings.ToLower(sha)] = c
}

// SetDelay makes every answer wait d, so that requests overlap.
func (s *server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// SetLimit sets the primary rate limit: n requests per window, counted
// from now, whose end the reset header gives in whole seconds.
func (s *server) SetLimit(n int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit, s.window, s.remaining = n, window, n
	s.reset = ceilSecond(time.Now().Add(window))
}

// Exhaust spends the primary limit until d from now: every request until
// then is refused as over the limit.
func (s *server) Exhaust(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remaining = 0
	s.reset = ceilSecond(time.Now().Add(d))
	s.window = d
}

// FailNext makes the next n requests that pass authentication answer
// status (a 5xx, say) with an error body in the forge's shape.
func (s *server) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, status)
	}
}

func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); r.Before(t) {
		return r.Add(time.Second)
	}
	return t
}

// begin counts a request in and reports the delay to wait.
func (s *server) begin() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	return s.delay
}

func (s *server) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

func (s *server) fault(r *http.Request, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, r.Method+" "+r.URL.RequestURI()+": "+why)
}

// take charges one request to the primary limit: it reports the state to
// send in headers and whether the request is over the limit.
func (s *server) take() (limit, remaining, used int, reset time.Time, over bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !time.Now().Before(s.reset) {
		s.remaining = s.limit
		s.reset = ceilSecond(time.Now().Add(s.window))
	}
	if s.remaining == 0 {
		s.throttled++
		return s.limit, 0, s.limit, s.reset, true
	}
	s.remaining--
	return s.limit, s.remaining, s.limit - s.remaining, s.reset, false
}

func (s *server) nextFailure() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) == 0 {
		return 0
	}
	status := s.failures[0]
	s.failures = s.failures[1:]
	return status
}

func (s *server) commit(sha string) (Commit, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked[sha]++
	c, ok := s.commits[sha]
	return c, ok
}

// shaPattern is what both forges take for a commit: hex, abbreviated or
// whole (SHA-1 or SHA-256).
var shaPattern = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // the fake's own values always encode
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(data)
}

func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// mergedAt is a fixed time for merged requests: the fakes' answers are
// the same from run to run.
var mergedAt = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func itoa(n int) string { return strconv.Itoa(n) }

func unixText(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
