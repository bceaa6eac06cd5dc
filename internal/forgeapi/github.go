package forgeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// GitHub's REST API, version 2022-11-28 (https://docs.github.com/en/rest).

// GitHubAPIVersion is the REST API version every request asks for.
const GitHubAPIVersion = "2022-11-28"

// DefaultGitHubAPI is github.com's API; GitHub Enterprise Server's is
// https://HOST/api/v3.
const DefaultGitHubAPI = "https://api.github.com"

type github struct {
	name, token, tokenVar string
	repo                  string // owner/name
}

func (g *github) header() http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+g.token)
	h.Set("Accept", "application/vnd.github+json")
	h.Set("X-GitHub-Api-Version", GitHubAPIVersion)
	return h
}

// paths: the pull requests that hold a commit (all of them on one page:
// a commit is in a handful at most), and the commit itself as the list
// of commits gives it, which carries author.login without the files and
// patches GET .../commits/{sha} adds (up to megabytes).
func (g *github) changesPath(sha string) string {
	return "/repos/" + escapePath(g.repo) + "/commits/" + sha + "/pulls?per_page=100"
}

func (g *github) loginPath(sha string) string {
	return "/repos/" + escapePath(g.repo) + "/commits?sha=" + sha + "&per_page=1"
}

func (g *github) repoPath() string { return "/repos/" + escapePath(g.repo) }

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// limits reads x-ratelimit-limit, -remaining, -used, -reset (Unix seconds)
// and -resource.
func (g *github) limits(h http.Header, now time.Time) (*provider.Limits, *quota) {
	remaining := provider.HeaderCount(h.Get("x-ratelimit-remaining"))
	if remaining < 0 {
		return nil, nil
	}
	q := &quota{
		Limit: provider.HeaderCount(h.Get("x-ratelimit-limit")), Remaining: remaining,
		Reset: epoch(h.Get("x-ratelimit-reset")), Resource: h.Get("x-ratelimit-resource"),
	}
	return engineLimits(q, now), q
}

// secondaryWait is how long GitHub asks a client to hold off after a
// secondary limit that gave no retry-after: "at least one minute".
const secondaryWait = time.Minute

// refused classifies GitHub's refusals as its documentation says to tell
// them apart (Rate limits for the REST API, "Exceeding the rate limit"):
// 403 or 429 with retry-after is a secondary limit, to wait out; with
// x-ratelimit-remaining 0 the primary limit, until x-ratelimit-reset;
// with a message naming a rate limit a secondary one, for at least a
// minute; any other 403 is a permission, which waiting does not mend.
func (g *github) refused(status int, h http.Header, data []byte, limits *provider.Limits, q *quota) *provider.Error {
	message := errorMessage(data)
	e := provider.StatusError(g.name, g.token, status, h, data, message, "", json.Valid(data), limits)
	e.RetryAfter = min(e.RetryAfter, maxForgeWait)
	now := serverNow(h)
	rateLimit := status == http.StatusForbidden || status == http.StatusTooManyRequests
	switch {
	case rateLimit && e.RetryAfter > 0:
		e.Kind, e.Type = provider.RateLimited, "secondary rate limit"
		if q != nil && q.Remaining == 0 && !q.Reset.IsZero() {
			e.Type = "rate limit"
		}
	case rateLimit && q != nil && q.Remaining == 0:
		e.Kind, e.Type = provider.RateLimited, "rate limit"
		e.RetryAfter = secondaryWait
		if !q.Reset.IsZero() {
			e.RetryAfter = untilReset(q.Reset, now)
		}
	case status == http.StatusTooManyRequests, rateLimit && strings.Contains(strings.ToLower(message), "rate limit"):
		e.Kind, e.Type, e.RetryAfter = provider.RateLimited, "secondary rate limit", secondaryWait
	case status == http.StatusUnauthorized:
		e.Kind, e.Hint = provider.Fatal, fmt.Sprintf("Try: a valid token in %s (GitHub refused it; it must be current and may read %s)", g.tokenVar, g.repo)
	case status == http.StatusForbidden:
		e.Kind, e.Hint = provider.Fatal, fmt.Sprintf("Try: a token in %s that may read %s's contents and pull requests", g.tokenVar, g.repo)
	}
	return e
}

// The shapes read of GitHub's answers: what digest uses of them.
type githubPull struct {
	Number   int           `json:"number"`
	Title    string        `json:"title"`
	HTMLURL  string        `json:"html_url"`
	User     *githubUser   `json:"user"`
	Labels   []githubLabel `json:"labels"`
	MergedAt *string       `json:"merged_at"`
	Base     struct {
		Ref  string `json:"ref"`
		Repo *struct {
			DefaultBranch string `json:"default_branch"`
		} `json:"repo"`
	} `json:"base"`
}

type githubUser struct {
	Login string `json:"login"`
}

type githubLabel struct {
	Name string `json:"name"`
}

type githubCommit struct {
	SHA    string      `json:"sha"`
	Author *githubUser `json:"author"`
}

type githubRepo struct {
	DefaultBranch string `json:"default_branch"`
}

func (g *github) check(o op, data []byte) error {
	var err error
	switch o {
	case opChanges:
		_, err = githubChanges(data)
	case opLogin:
		var commits []githubCommit
		err = json.Unmarshal(data, &commits)
	case opRepo:
		var r githubRepo
		err = json.Unmarshal(data, &r)
	default:
		err = fmt.Errorf("unknown operation %q", o)
	}
	return err
}

// githubChanges reads a list of pull requests.
func githubChanges(data []byte) ([]change, error) {
	var pulls []githubPull
	if err := json.Unmarshal(data, &pulls); err != nil {
		return nil, err
	}
	changes := make([]change, 0, len(pulls))
	for _, p := range pulls {
		c := change{Number: p.Number, Title: p.Title, URL: p.HTMLURL, Base: p.Base.Ref,
			Merged: p.MergedAt != nil && *p.MergedAt != ""}
		if p.User != nil {
			c.Login = p.User.Login
		}
		if p.Base.Repo != nil {
			c.DefaultBranch = p.Base.Repo.DefaultBranch
		}
		for _, l := range p.Labels {
			c.Labels = append(c.Labels, l.Name)
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// githubLogin reads the commit's author's login from a list of commits
// that starts with it; "" when GitHub links its email to no account.
func githubLogin(data []byte, sha string) (string, error) {
	var commits []githubCommit
	if err := json.Unmarshal(data, &commits); err != nil {
		return "", err
	}
	if len(commits) == 0 || !strings.EqualFold(commits[0].SHA, sha) || commits[0].Author == nil {
		return "", nil
	}
	return commits[0].Author.Login, nil
}

func githubDefaultBranch(data []byte) (string, error) {
	var r githubRepo
	err := json.Unmarshal(data, &r)
	return r.DefaultBranch, err
}

// githubLoginPattern is what GitHub allows of a login: letters, digits and
// single hyphens, at most 39, not starting with a hyphen; an app's bot
// adds [bot].
var githubLoginPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)
