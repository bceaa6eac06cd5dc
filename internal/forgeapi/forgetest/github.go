package forgetest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// GitHub is a fake of GitHub's REST API (https://docs.github.com/en/rest,
// version 2022-11-28) for one repository, serving at URL as
// https://api.github.com does:
//
//   - GET /repos/{owner}/{repo}/commits/{sha}/pulls: the pull requests
//     that hold the commit (pull-request-simple: number, title, html_url,
//     user.login, labels[].name, merged_at, base.ref, base.repo's
//     default_branch ...)
//   - GET /repos/{owner}/{repo}/commits/{sha}: the commit, author.login
//     null for an email GitHub links to no account
//   - GET /repos/{owner}/{repo}/commits?sha={sha}: the commits from sha
//     back, one page (per_page, at most 100)
//   - GET /repos/{owner}/{repo}: the repository, with default_branch
//
// Every answer carries x-ratelimit-limit, -remaining, -used, -reset (Unix
// seconds) and -resource (core). Over the primary limit a request gets 403
// (or 429: SetLimitStatus) with remaining 0 and "API rate limit exceeded";
// SecondaryLimit's requests get "You have exceeded a secondary rate
// limit", with retry-after when given one. A token other than the fake's
// gets 401 Bad credentials, no token 401 Requires authentication, no
// User-Agent 403, an unknown repository 404 Not Found, a commit the
// fake does not know (or a malformed hash) 422 No commit found for SHA.
// A request without Accept: application/vnd.github+json (or
// application/json) or without X-GitHub-Api-Version: 2022-11-28 gets 400
// or 415; GitHub would default both, the fake holds clients to sending
// them.
type GitHub struct {
	*server
	// URL is the API's base URL, to use in place of https://api.github.com.
	URL string
	// Repo is the repository, owner/name.
	Repo string

	limitStatus int
	secondary   []secondary
}

type secondary struct {
	retryAfter time.Duration
	status     int
}

// NewGitHub starts a fake GitHub API that knows repo (owner/name) and
// commits, keyed by full hash, and stops it when the test ends.
func NewGitHub(t testing.TB, repo string, commits map[string]Commit) *GitHub {
	g := &GitHub{Repo: repo, limitStatus: http.StatusForbidden}
	g.server = newServer(t, "https://github.com", commits, http.HandlerFunc(g.serve))
	g.URL = g.srv.URL
	return g
}

// SetLimitStatus sets the status of an answer over the primary limit:
// 403 (the default) or 429, both of which GitHub sends.
func (g *GitHub) SetLimitStatus(status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limitStatus = status
}

// SecondaryLimit makes the next n requests that pass authentication hit a
// secondary rate limit: status 403 or 429, with retry-after in whole
// seconds when retryAfter is not 0, and none when it is.
func (g *GitHub) SecondaryLimit(n int, retryAfter time.Duration, status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for range n {
		g.secondary = append(g.secondary, secondary{retryAfter, status})
	}
}

func (g *GitHub) nextSecondary() (secondary, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.secondary) == 0 {
		return secondary{}, false
	}
	s := g.secondary[0]
	g.secondary = g.secondary[1:]
	g.throttled++
	return s, true
}

const githubDocs = "https://docs.github.com/rest"

func githubError(w http.ResponseWriter, status int, message, docs string) {
	writeJSON(w, status, map[string]string{"message": message, "documentation_url": docs, "status": itoa(status)})
}

func (g *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	delay := g.begin()
	defer g.end()
	if delay > 0 {
		time.Sleep(delay)
	}
	h := w.Header()
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Request-Id", "F0F0:1234:ABCD:EF01:65000000")
	if r.Header.Get("User-Agent") == "" {
		g.fault(r, "no User-Agent")
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes."})
		return
	}
	switch accept := r.Header.Get("Accept"); {
	case accept == "":
		g.fault(r, "no Accept header")
		githubError(w, http.StatusBadRequest, "Missing Accept header: send application/vnd.github+json", githubDocs)
		return
	case !strings.Contains(accept, "application/vnd.github+json") && !strings.Contains(accept, "application/vnd.github.v3+json") && !strings.Contains(accept, "application/json"):
		g.fault(r, "Accept "+accept)
		githubError(w, http.StatusUnsupportedMediaType, "Unsupported 'Accept' header: "+accept, githubDocs)
		return
	}
	switch v := r.Header.Get("X-GitHub-Api-Version"); v {
	case "2022-11-28":
		h.Set("X-GitHub-Api-Version-Selected", v)
	case "":
		g.fault(r, "no X-GitHub-Api-Version header")
		githubError(w, http.StatusBadRequest, "Missing 'X-GitHub-Api-Version' header: send 2022-11-28", githubDocs)
		return
	default:
		g.fault(r, "X-GitHub-Api-Version "+v)
		githubError(w, http.StatusBadRequest, "Unsupported 'X-GitHub-Api-Version' header value: "+v, githubDocs)
		return
	}
	token, _, _, _ := g.settings()
	switch auth := r.Header.Get("Authorization"); {
	case auth == "":
		g.fault(r, "no Authorization header")
		githubError(w, http.StatusUnauthorized, "Requires authentication", githubDocs)
		return
	case auth != "Bearer "+token && auth != "token "+token:
		githubError(w, http.StatusUnauthorized, "Bad credentials", githubDocs)
		return
	}
	if r.Method != http.MethodGet {
		g.fault(r, "method "+r.Method)
		githubError(w, http.StatusNotFound, "Not Found", githubDocs)
		return
	}
	limit, remaining, used, reset, over := g.take()
	h.Set("x-ratelimit-limit", itoa(limit))
	h.Set("x-ratelimit-remaining", itoa(remaining))
	h.Set("x-ratelimit-used", itoa(used))
	h.Set("x-ratelimit-reset", unixText(reset))
	h.Set("x-ratelimit-resource", "core")
	if over {
		g.mu.Lock()
		status := g.limitStatus
		g.mu.Unlock()
		githubError(w, status, "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID F0F0:1234:ABCD:EF01:65000000.",
			"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api")
		return
	}
	if s, ok := g.nextSecondary(); ok {
		if s.retryAfter > 0 {
			h.Set("Retry-After", itoa(int((s.retryAfter+time.Second-1)/time.Second)))
		}
		githubError(w, s.status, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID F0F0:1234:ABCD:EF01:65000000.",
			"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits")
		return
	}
	if status := g.nextFailure(); status != 0 {
		githubError(w, status, http.StatusText(status), githubDocs)
		return
	}
	g.route(w, r)
}

// route answers a request that passed every check.
func (g *GitHub) route(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[0] != "repos" || !strings.EqualFold(parts[1]+"/"+parts[2], g.Repo) {
		githubError(w, http.StatusNotFound, "Not Found", githubDocs)
		return
	}
	switch rest := parts[3:]; {
	case len(rest) == 0:
		writeJSON(w, http.StatusOK, g.repository())
	case len(rest) == 1 && rest[0] == "commits":
		g.listCommits(w, r)
	case len(rest) == 2 && rest[0] == "commits":
		sha, c, ok := g.sha(w, r, rest[1])
		if !ok {
			return
		}
		writeJSON(w, http.StatusOK, g.commitObject(sha, c))
	case len(rest) == 3 && rest[0] == "commits" && rest[2] == "pulls":
		sha, c, ok := g.sha(w, r, rest[1])
		if !ok {
			return
		}
		pulls := []any{}
		for _, pr := range c.PRs {
			pulls = append(pulls, g.pull(sha, pr))
		}
		writeJSON(w, http.StatusOK, pulls)
	default:
		githubError(w, http.StatusNotFound, "Not Found", githubDocs)
	}
}

// sha checks a commit named in a request: a malformed one is the
// client's fault; one the fake does not know is refused as GitHub
// refuses it.
func (g *GitHub) sha(w http.ResponseWriter, r *http.Request, raw string) (string, Commit, bool) {
	if !shaPattern.MatchString(raw) {
		g.fault(r, "malformed commit "+raw)
		githubError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+raw, "https://docs.github.com/rest/commits/commits#get-a-commit")
		return "", Commit{}, false
	}
	sha := strings.ToLower(raw)
	c, ok := g.commit(sha)
	if !ok {
		githubError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+raw, "https://docs.github.com/rest/commits/commits#get-a-commit")
		return "", Commit{}, false
	}
	return sha, c, true
}

func (g *GitHub) listCommits(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if pp := q.Get("per_page"); pp != "" {
		if n := atoi(pp); n < 1 || n > 100 {
			g.fault(r, "per_page "+pp)
		}
	}
	sha, c, ok := g.sha(w, r, q.Get("sha"))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, []any{g.commitObject(sha, c)})
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' || n > 1e6 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func (g *GitHub) apiRepo() string { return g.URL + "/repos/" + g.Repo }

func (g *GitHub) repository() map[string]any {
	_, _, web, branch := g.settings()
	owner, name, _ := strings.Cut(g.Repo, "/")
	return map[string]any{
		"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": name, "full_name": g.Repo,
		"owner":   map[string]any{"login": owner, "id": 1, "type": "Organization"},
		"private": false, "html_url": web + "/" + g.Repo, "url": g.apiRepo(),
		"default_branch": branch, "fork": false,
	}
}

func user(login string) any {
	if login == "" {
		return nil
	}
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "id": 583231, "node_id": "MDQ6VXNlcjU4MzIzMQ==", "type": typ, "site_admin": false,
		"html_url": "https://github.com/" + login}
}

func (g *GitHub) pull(sha string, pr PR) map[string]any {
	_, _, web, branch := g.settings()
	labels := []any{}
	for i, l := range pr.Labels {
		labels = append(labels, map[string]any{"id": 208045946 + i, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=", "name": l,
			"color": "f29513", "default": false, "description": nil})
	}
	base := pr.Base
	if base == "" {
		base = branch
	}
	state, merged, closed := "closed", any(timeText(mergedAt)), any(timeText(mergedAt))
	if pr.Open {
		state, merged, closed = "open", nil, nil
	}
	html := web + "/" + g.Repo + "/pull/" + itoa(pr.Number)
	return map[string]any{
		"url": g.apiRepo() + "/pulls/" + itoa(pr.Number), "id": 1347 + pr.Number, "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==",
		"html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch",
		"number": pr.Number, "state": state, "locked": false, "title": pr.Title, "user": user(pr.Login),
		"body": "Please pull these awesome changes in!", "labels": labels, "milestone": nil,
		"created_at": timeText(mergedAt.Add(-24 * time.Hour)), "updated_at": timeText(mergedAt),
		"closed_at": closed, "merged_at": merged, "merge_commit_sha": sha,
		"assignee": nil, "assignees": []any{}, "requested_reviewers": []any{},
		"head":               map[string]any{"label": "contributor:feature", "ref": "feature", "sha": sha, "user": user(pr.Login)},
		"base":               map[string]any{"label": "owner:" + base, "ref": base, "sha": sha, "repo": g.repository()},
		"author_association": "CONTRIBUTOR", "auto_merge": nil, "draft": false,
	}
}

func (g *GitHub) commitObject(sha string, c Commit) map[string]any {
	_, _, web, _ := g.settings()
	person := map[string]any{"name": "Ada", "email": "ada@example.com", "date": timeText(mergedAt)}
	return map[string]any{
		"url": g.apiRepo() + "/commits/" + sha, "sha": sha, "node_id": "MDY6Q29tbWl0NmRjYjA5YjViNTc4NzVmMzM0ZjYxYWViZWQ2OTVlMmU0MTkzZGI1ZQ==",
		"html_url": web + "/" + g.Repo + "/commit/" + sha,
		"commit": map[string]any{"author": person, "committer": person, "message": "a commit", "comment_count": 0,
			"tree": map[string]any{"sha": strings.Repeat("0", 40)}},
		"author": user(c.Login), "committer": user(c.Login), "parents": []any{},
	}
}
