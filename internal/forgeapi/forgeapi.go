// Package forgeapi asks a forge's REST API (GitHub's, GitLab's) what a
// repository's local history cannot tell of a commit: the pull or merge
// request that brought it in, its title, link and labels, and the @login
// to credit. The calls go through the engine as a model's requests do,
// paced, retried in its one loop, paused on the forge's rate-limit
// headers and stopped by the run's longest wait; every answer is stored
// the moment it lands, so no commit is asked twice, by this run, a rerun
// or another process on the same database.
//
// What is kept, and for how long: an answer that names a pull request is
// kept for ever (a merged request does not change its commits); one that
// does not ("nothing known": no merged request, an unknown commit or
// repository) is kept for Options.UnknownTTL, a day by default, since a
// commit pushed before its request was merged, or a repository the token
// could not see, may be known later. The token is never stored, logged or
// put in an error: the cache key is the forge, the repository and the
// commit.
package forgeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Info is what a forge knows of one commit.
type Info struct {
	// Login is who to credit, without the @: the author of the pull or
	// merge request that brought the commit in (as GitHub's release notes
	// credit), else, on GitHub, the account the commit's author email
	// belongs to; "" when the forge names none.
	Login string
	// PR is the pull request's number (GitLab: the merge request's iid),
	// 0 when none merged the commit; PRTitle, PRURL and Labels are its.
	PR      int
	PRTitle string
	PRURL   string
	Labels  []string
	// Known is set when the forge named a request or a login.
	Known bool
}

// Token is the secret a forge's API is asked with, and the variable it
// came from, which messages name in its place. Printed or logged, it
// shows the variable alone.
type Token struct {
	Value string
	// Var is the environment variable that held it: GITHUB_TOKEN,
	// GITLAB_TOKEN, or CI_JOB_TOKEN (sent as a GitLab job's token).
	Var string
}

// String is the token's variable, never its value.
func (t Token) String() string { return t.Var }

// GoString is String, for %#v.
func (t Token) GoString() string { return t.Var }

// LogValue is String, for slog.
func (t Token) LogValue() slog.Value { return slog.StringValue(t.Var) }

// TokenVars are the variables TokenFor reads, by forge, in order.
var TokenVars = map[forge.Kind][]string{
	forge.GitHub: {"GITHUB_TOKEN", "GH_TOKEN"},
	forge.GitLab: {"GITLAB_TOKEN", JobTokenVar},
}

// TokenFor finds the token for kind in the environment getenv reads: the
// first of TokenVars[kind] set. ok is false when none is, or when digest
// cannot ask that kind of forge.
func TokenFor(kind forge.Kind, getenv func(string) string) (Token, bool) {
	for _, v := range TokenVars[kind] {
		if s := strings.TrimSpace(getenv(v)); s != "" {
			return Token{Value: s, Var: v}, true
		}
	}
	return Token{}, false
}

// Options are a Client's limits and settings; the zero value is usable.
type Options struct {
	// APIURL is the API's base URL; "" derives it from the forge:
	// https://api.github.com for github.com, https://HOST/api/v3 for
	// GitHub Enterprise Server, https://HOST/api/v4 for GitLab.
	APIURL string
	// Concurrency is how many requests may be in flight at once
	// (DefaultConcurrency); the engine starts at one and ramps up.
	Concurrency int
	// RPM paces the requests per minute; 0 is the forge's documented
	// ceiling (DefaultRPM).
	RPM int
	// MaxWait, Timeout and MaxFailures are the engine's (see
	// engine.Engine): the longest wait a rate limit may ask for before the
	// lookup stops, each request's bound, and the failures in a row that
	// stop it. Zero takes the engine's default; Timeout's is
	// DefaultTimeout.
	MaxWait     time.Duration
	Timeout     time.Duration
	MaxFailures int
	// UnknownTTL is how long an answer that names no request is kept
	// (DefaultUnknownTTL).
	UnknownTTL time.Duration
	// DefaultBranch is the repository's default branch, when the caller
	// knows it; a commit in several merged requests is credited to the
	// one merged into it. "" asks the forge when it matters.
	DefaultBranch string
	HTTPClient    *http.Client
}

// Defaults for Options' zero values.
const (
	// DefaultConcurrency is modest: GitHub asks that one user's requests
	// go one at a time, and counts more than 100 at once against its
	// secondary limit.
	DefaultConcurrency = 4
	DefaultTimeout     = 30 * time.Second
	DefaultUnknownTTL  = 24 * time.Hour
)

// DefaultRPM is each forge's ceiling per minute: GitHub's secondary limit
// allows 900 points a minute to REST endpoints (a GET costs one); GitLab
// (gitlab.com allows 2,000 authenticated requests a minute; a
// self-managed instance sets its own) is held well under it.
var DefaultRPM = map[forge.Kind]int{forge.GitHub: 900, forge.GitLab: 600}

// Client looks commits up in one repository's forge.
type Client struct {
	forge      forge.Forge
	kind       forge.Kind
	repo       string // owner/name, group/name: the path of forge.Base
	api        string // the API's host, in messages
	token      Token
	store      store.ForgeStore
	log        *slog.Logger
	eng        *engine.Engine
	rest       *rest
	changes    func(sha string) string
	login      func(sha string) string // nil: the forge has no login lookup
	unknownTTL time.Duration
	maxWait    time.Duration
	concurrent int

	branchMu      sync.Mutex
	defaultBranch string
	branchKnown   bool

	missingRepo sync.Once
	cached      atomic.Int64
	asked       atomic.Int64
}

// New makes a client for f's API, asked with tok, storing its answers in
// st. It refuses a forge digest cannot ask (Bitbucket, Gitea), an empty
// token and an API URL that is no URL.
func New(f forge.Forge, tok Token, st store.ForgeStore, log *slog.Logger, o Options) (*Client, error) {
	host, repo, err := splitBase(f.Base)
	if err != nil {
		return nil, err
	}
	if tok.Value == "" {
		vars := TokenVars[f.Kind]
		if len(vars) == 0 {
			vars = []string{"a token"}
		}
		return nil, fmt.Errorf("forge lookups for %s need a token. Try: export %s=<a token that may read %s>", textsafe.URL(f.Base), vars[0], repo)
	}
	if st == nil {
		return nil, errors.New("forge lookups need a store to keep their answers in")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	api := strings.TrimRight(o.APIURL, "/")
	c := &Client{forge: f, kind: f.Kind, repo: repo, token: tok, store: st, log: log,
		unknownTTL: o.UnknownTTL, maxWait: o.MaxWait, concurrent: o.Concurrency, defaultBranch: o.DefaultBranch, branchKnown: o.DefaultBranch != ""}
	r := &rest{token: tok.Value, http: o.HTTPClient}
	switch f.Kind {
	case forge.GitHub:
		if api == "" {
			api = "https://" + host + "/api/v3"
			if host == "github.com" || host == "www.github.com" {
				api = DefaultGitHubAPI
			}
		}
		r.name = "GitHub API (" + hostOf(api) + ")"
		g := &github{name: r.name, token: tok.Value, tokenVar: tok.Var, repo: repo}
		r.wire, c.changes, c.login = g, g.changesPath, g.loginPath
	case forge.GitLab:
		if api == "" {
			api = "https://" + host + "/api/v4"
		}
		r.name = "GitLab API (" + hostOf(api) + ")"
		g := &gitlab{name: r.name, token: tok.Value, tokenVar: tok.Var, project: repo}
		r.wire, c.changes = g, g.changesPath
	default:
		return nil, fmt.Errorf("forge lookups know GitHub and GitLab, not %s (%s). Try: leave them off for this repository", f.Kind, textsafe.URL(f.Base))
	}
	if u, err := url.Parse(api); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("forge API URL %q is not an http(s) URL. Try: one such as %s or https://HOST/api/v3", textsafe.URL(api), DefaultGitHubAPI)
	}
	r.base, c.api, c.rest = api, r.name, r
	if r.http == nil {
		r.http = http.DefaultClient
	}
	if c.unknownTTL <= 0 {
		c.unknownTTL = DefaultUnknownTTL
	}
	if c.concurrent <= 0 {
		c.concurrent = DefaultConcurrency
	}
	rpm := o.RPM
	if rpm <= 0 {
		rpm = DefaultRPM[f.Kind]
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c.eng = &engine.Engine{
		Provider: r, Model: r.name, Concurrency: c.concurrent, Limits: engine.Limits{RPM: rpm},
		SlowStart: true, Timeout: timeout, MaxWait: o.MaxWait, MaxFailures: o.MaxFailures, Log: log,
	}
	return c, nil
}

// splitBase reads a forge's repository page: its host and the path.
func splitBase(base string) (host, path string, err error) {
	u, perr := url.Parse(base)
	if perr != nil || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return "", "", fmt.Errorf("forge repository %q is not a repository's page. Try: a remote such as https://github.com/OWNER/NAME", textsafe.URL(base))
	}
	return strings.ToLower(u.Hostname()), strings.Trim(u.Path, "/"), nil
}

func hostOf(api string) string {
	if u, err := url.Parse(api); err == nil && u.Host != "" {
		return u.Host
	}
	return api
}

// Stats counts what a client has done so far.
type Stats struct {
	Cached      int64 // commits answered from the store
	Asked       int64 // commits asked of the forge
	Requests    int64 // requests answered, retries included
	RateLimited int64 // requests refused by a rate limit
}

// Stats reports the counters; it is safe to call while lookups run.
func (c *Client) Stats() Stats {
	es := c.eng.Stats()
	return Stats{Cached: c.cached.Load(), Asked: c.asked.Load(), Requests: es.Requests, RateLimited: es.RateLimited}
}

// Lookup returns what the forge knows of each of commits (full hashes,
// 40 or 64 hex digits), keyed as given. It reads the stored answers
// first, in one query per few hundred commits, asks the forge only for
// the rest, at most Options.Concurrency at once under the engine's
// pacing, and stores each answer as it lands. A commit the forge knows
// nothing of is in the map with Known false. When lookups fail the map
// still holds every commit answered, and the error says why the others
// are missing: a rate limit that asks for a longer wait than MaxWait, a
// refused token, a store that cannot be written (the lookup stops), or
// requests that failed for good (the others go on). Once stopped, the
// client stays stopped: a later Lookup answers from the store alone and
// returns the same error for the rest. Two Lookups at once on one client
// share its limits, but a commit both ask for may be asked twice.
func (c *Client) Lookup(ctx context.Context, commits []string) (map[string]Info, error) {
	out := make(map[string]Info, len(commits))
	byKey := map[string][]string{} // cache key: the commits as given
	var keys []string
	for _, given := range commits {
		sha := strings.ToLower(given)
		if !isHash(sha) {
			return nil, fmt.Errorf("forge lookup: %q is not a full commit hash (40 or 64 hex digits). Try: git rev-parse %s", textsafe.Line(given), textsafe.Line(given))
		}
		k := c.key(sha)
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], given)
	}
	if len(keys) == 0 {
		return out, nil
	}
	stored, err := c.store.ForgeAnswers(ctx, keys)
	if err != nil {
		return nil, err
	}
	var todo []string // cache keys
	for _, k := range keys {
		body, ok := stored[k]
		if !ok {
			todo = append(todo, k)
			continue
		}
		info, err := decodeInfo(body)
		if err != nil {
			c.log.Debug("forge answer unreadable; asking again", "forge", c.api, "commit", byKey[k][0], "error", err)
			todo = append(todo, k)
			continue
		}
		c.cached.Add(1)
		for _, given := range byKey[k] {
			out[given] = info
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	var (
		mu                sync.Mutex
		stop              error // stops the lookup: a fatal error, a store that fails
		failed            int
		firstFailure      error
		runCtx, cancelRun = context.WithCancel(ctx)
	)
	defer cancelRun()
	do := func(k string) {
		sha := strings.ToLower(byKey[k][0])
		c.asked.Add(1)
		info, err := c.ask(runCtx, sha)
		if err == nil {
			err = c.save(runCtx, k, info)
			if err != nil {
				err = &stopError{err}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			for _, given := range byKey[k] {
				out[given] = info
			}
		case ctx.Err() != nil:
		case isStop(err):
			if stop == nil {
				stop = err
				cancelRun()
			}
		case runCtx.Err() == nil:
			failed++
			if firstFailure == nil {
				firstFailure = err
			}
			c.log.Warn("forge lookup failed", "forge", c.api, "commit", sha, "error", err)
		}
	}
	// The first commit is asked alone: a refused token, a repository the
	// token cannot see, stop the lookup after one request, not after as
	// many as were in flight.
	do(todo[0])
	todo = todo[1:]
	if runCtx.Err() != nil {
		todo = nil
	}
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range min(c.concurrent, len(todo)) {
		wg.Go(func() {
			for k := range jobs {
				do(k)
			}
		})
	}
feed:
	for _, k := range todo {
		select {
		case jobs <- k:
		case <-runCtx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	switch {
	case stop != nil:
		return out, c.explain(stop)
	case ctx.Err() != nil:
		return out, ctx.Err()
	case failed > 0:
		return out, &FailedError{API: c.api, Failed: failed, Asked: len(todo) + 1, First: c.explain(firstFailure)}
	}
	return out, nil
}

// isHash reports a full commit hash in lower case: SHA-1 or SHA-256.
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// key is a commit's cache key: the forge's kind, the repository (host and
// path, in one spelling) and the commit; never the token.
func (c *Client) key(sha string) string {
	return key.Of("digest/forge/v1", string(c.kind), strings.ToLower(key.BaseURL(c.forge.Base)), sha)
}

// FailedError is a lookup some of whose commits failed for good (a
// refusal the forge repeated, a server down past the retries) while the
// others were answered: a run may go on with those, and a rerun asks
// again for these.
type FailedError struct {
	API           string // "GitHub API (api.github.com)"
	Failed, Asked int
	First         error // the first failure
}

func (e *FailedError) Error() string {
	first := strings.TrimPrefix(e.First.Error(), e.API+": ")
	return fmt.Sprintf("%s: %d of %d commits could not be looked up (the first: %s); the other answers are stored, and a rerun asks again for these",
		e.API, e.Failed, e.Asked, first)
}

func (e *FailedError) Unwrap() error { return e.First }

// stopError is a failure that stops the whole lookup.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

func isStop(err error) bool {
	var fe *engine.FatalError
	var se *stopError
	return errors.As(err, &fe) || errors.As(err, &se)
}

// ask asks the forge about one commit: its requests, then, when none was
// merged, the commit itself for its author's login (GitHub).
func (c *Client) ask(ctx context.Context, sha string) (Info, error) {
	env, err := c.call(ctx, opChanges, c.changes(sha))
	if err != nil {
		return Info{}, err
	}
	if !env.found() {
		c.notFound(env)
		return Info{}, nil
	}
	var changes []change
	if c.kind == forge.GitHub {
		changes, err = githubChanges(env.Body)
	} else {
		changes, err = gitlabChanges(env.Body)
	}
	if err != nil {
		return Info{}, err // checked before: cannot happen
	}
	pick, err := c.choose(ctx, changes)
	if err != nil {
		return Info{}, err
	}
	if pick != nil {
		return c.infoOf(*pick), nil
	}
	if c.login == nil {
		return Info{}, nil
	}
	env, err = c.call(ctx, opLogin, c.login(sha))
	if err != nil || !env.found() {
		return Info{}, err
	}
	login, err := githubLogin(env.Body, sha)
	if err != nil {
		return Info{}, err
	}
	info := Info{Login: c.cleanLogin(login)}
	info.Known = info.Login != ""
	return info, nil
}

// call sends one GET through the engine.
func (c *Client) call(ctx context.Context, o op, path string) (envelope, error) {
	out := c.eng.Do(ctx, engine.Task{Key: string(o) + " " + path, Request: request(o, path)})
	if out.Err != nil {
		return envelope{}, out.Err
	}
	return decodeEnvelope(out.Response.Text)
}

// notFound warns, once, of a repository the forge does not know (or the
// token may not see): every commit of it will be "nothing known".
func (c *Client) notFound(env envelope) {
	if env.Status != http.StatusNotFound || strings.Contains(strings.ToLower(env.Message), "commit") {
		return
	}
	c.missingRepo.Do(func() {
		c.log.Warn(fmt.Sprintf("%s knows no repository %s, or %s may not read it: its commits are taken as unknown for %s", c.api, c.repo, c.token.Var, c.unknownTTL),
			"message", env.Message)
	})
}

// change is a pull or merge request as either forge lists it.
type change struct {
	Number        int
	Title, URL    string
	Login         string
	Labels        []string
	Merged        bool
	Base          string // the branch it was merged into
	DefaultBranch string // the repository's, when the answer tells it
}

// choose picks the request that brought a commit in: the one merged into
// the repository's default branch, else the first merged; nil when none
// was merged (an open request is not how the commit came in). The
// default branch is asked for only when two merged requests disagree.
func (c *Client) choose(ctx context.Context, changes []change) (*change, error) {
	var merged []*change
	for i := range changes {
		if changes[i].Merged && changes[i].Number > 0 {
			merged = append(merged, &changes[i])
		}
	}
	if len(merged) <= 1 {
		if len(merged) == 0 {
			return nil, nil
		}
		return merged[0], nil
	}
	for _, m := range merged {
		if m.DefaultBranch != "" && m.Base == m.DefaultBranch {
			return m, nil
		}
	}
	def, err := c.branch(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range merged {
		if def != "" && m.Base == def {
			return m, nil
		}
	}
	return merged[0], nil
}

// branch is the repository's default branch: Options.DefaultBranch, or
// the forge's answer, asked once per client.
func (c *Client) branch(ctx context.Context) (string, error) {
	c.branchMu.Lock()
	defer c.branchMu.Unlock()
	if c.branchKnown {
		return c.defaultBranch, nil
	}
	var path string
	switch w := c.rest.wire.(type) {
	case *github:
		path = w.repoPath()
	case *gitlab:
		path = w.repoPath()
	}
	env, err := c.call(ctx, opRepo, path)
	if err != nil {
		return "", err
	}
	if env.found() {
		if c.kind == forge.GitHub {
			c.defaultBranch, err = githubDefaultBranch(env.Body)
		} else {
			c.defaultBranch, err = gitlabDefaultBranch(env.Body)
		}
		if err != nil {
			return "", err
		}
	}
	c.branchKnown = true
	return c.defaultBranch, nil
}

// Bounds on what a forge's answer may put in release notes: GitHub's
// titles stop at 256 characters, its labels at 50; the bounds leave room
// and keep a hostile server's answer small.
const (
	maxTitle  = 1024
	maxLabel  = 256
	maxLabels = 100
	maxURL    = 2048
)

// infoOf is a chosen request as Info, every string made safe to show.
func (c *Client) infoOf(ch change) Info {
	info := Info{Login: c.cleanLogin(ch.Login), PR: ch.Number, PRTitle: cut(textsafe.Line(ch.Title), maxTitle), PRURL: c.requestURL(ch)}
	for _, l := range ch.Labels {
		if l = cut(textsafe.Line(l), maxLabel); l != "" && len(info.Labels) < maxLabels {
			info.Labels = append(info.Labels, l)
		}
	}
	info.Known = true
	return info
}

// cleanLogin is login when the forge allows it as a login, else "".
func (c *Client) cleanLogin(login string) string {
	if c.kind == forge.GitHub && githubLoginPattern.MatchString(login) || c.kind == forge.GitLab && gitlabLoginPattern.MatchString(login) {
		return login
	}
	return ""
}

// requestURL is the request's page as the forge gave it, when it lies
// under the repository's own; otherwise the page digest knows it has.
func (c *Client) requestURL(ch change) string {
	sigil := byte('#')
	if c.kind == forge.GitLab {
		sigil = '!'
	}
	own, _ := c.forge.Ref(sigil, fmt.Sprint(ch.Number))
	u, err := url.Parse(ch.URL)
	if err != nil || len(ch.URL) > maxURL || u.Scheme != "https" && u.Scheme != "http" || u.User != nil ||
		!strings.HasPrefix(strings.ToLower(ch.URL), strings.ToLower(c.forge.Base)+"/") || strings.ContainsAny(ch.URL, " \t\r\n<>\"`") {
		return own
	}
	return ch.URL
}

// cut shortens s to at most n bytes, on a rune's boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// storedInfo is an answer as the store keeps it.
type storedInfo struct {
	Login  string   `json:"login,omitempty"`
	PR     int      `json:"pr,omitempty"`
	Title  string   `json:"title,omitempty"`
	URL    string   `json:"url,omitempty"`
	Labels []string `json:"labels,omitempty"`
}

func encodeInfo(info Info) ([]byte, error) {
	return json.Marshal(storedInfo{Login: info.Login, PR: info.PR, Title: info.PRTitle, URL: info.PRURL, Labels: info.Labels})
}

// decodeInfo reads a stored answer back.
func decodeInfo(body []byte) (Info, error) {
	var s storedInfo
	if err := json.Unmarshal(body, &s); err != nil {
		return Info{}, err
	}
	if s.PR < 0 {
		return Info{}, fmt.Errorf("pull request number %d", s.PR)
	}
	if len(s.Labels) == 0 {
		s.Labels = nil
	}
	return Info{Login: s.Login, PR: s.PR, PRTitle: s.Title, PRURL: s.URL, Labels: s.Labels, Known: s.PR > 0 || s.Login != ""}, nil
}

// save stores an answer: for ever when it names a request, for
// UnknownTTL when it does not.
func (c *Client) save(ctx context.Context, k string, info Info) error {
	body, err := encodeInfo(info)
	if err != nil {
		return err
	}
	ttl := c.unknownTTL
	if info.PR > 0 {
		ttl = 0
	}
	return c.store.SaveForgeAnswer(ctx, k, body, ttl)
}

// explain says what stopped a lookup in the forge's words: a rate limit
// whose wait passes MaxWait names the limit, the token's variable and
// when it resets.
func (c *Client) explain(err error) error {
	var we *engine.WaitError
	if !errors.As(err, &we) {
		return err
	}
	q := c.rest.last.Load()
	var what string
	switch {
	case q != nil && q.Secondary:
		what = "a secondary rate limit (too many requests at once or in a minute)"
	case q != nil && !q.Reset.IsZero():
		limit := "its rate limit"
		if q.Limit > 0 {
			limit = fmt.Sprintf("its rate limit (%d requests", q.Limit)
			if q.Resource != "" {
				limit += ", " + textsafe.Line(q.Resource)
			}
			limit += ")"
		}
		what = fmt.Sprintf("%s for %s, spent until %s", limit, c.token.Var, q.Reset.UTC().Format("15:04:05 UTC"))
	default:
		what = "its rate limit for " + c.token.Var
	}
	return &limitError{
		msg: fmt.Sprintf("%s: %s asks to wait %s, longer than --max-wait %s; the answers so far are stored. Try: run again later, or a longer --max-wait",
			c.api, what, we.Wait.Round(time.Second), we.Max),
		err: err,
	}
}

// limitError is a forge's rate limit that stops a lookup; it wraps the
// engine's *WaitError.
type limitError struct {
	msg string
	err error
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.err }
