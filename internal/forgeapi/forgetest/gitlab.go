package forgetest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// GitLab is a fake of GitLab's REST API v4 for one project, serving at
// URL as https://gitlab.com does (its base URL is URL + "/api/v4"):
//
//   - GET /api/v4/projects/:id/repository/commits/:sha/merge_requests: the
//     merge requests that hold the commit (iid, title, state, merged_at,
//     target_branch, web_url, author.username, labels as names)
//   - GET /api/v4/projects/:id: the project, with default_branch
//
// where :id is the project's path URL-encoded (group%2Fname) or its
// numeric id (ProjectID). Every answer carries RateLimit-Limit,
// -Observed, -Remaining, -Reset (Unix seconds) and -ResetTime (an HTTP
// date); over the limit a request gets 429 "Retry later" with
// Retry-After. A token other than the fake's (PRIVATE-TOKEN, or JOB-TOKEN
// for a CI job's) gets 401, an unknown project 404 Project Not Found, an
// unknown or malformed commit 404 Commit Not Found.
type GitLab struct {
	*server
	// URL is the server's address: the API is under URL + "/api/v4".
	URL string
	// Project is the project's path, group/name (groups may nest), and
	// ProjectID its numeric id.
	Project   string
	ProjectID int
}

// SetJobToken sets the CI job token the fake accepts in JOB-TOKEN (none
// until set); SetToken sets the one PRIVATE-TOKEN must hold.
func (g *GitLab) SetJobToken(token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.jobToken = token
}

// NewGitLab starts a fake GitLab API that knows project (group/name) and
// commits, keyed by full hash, and stops it when the test ends.
func NewGitLab(t testing.TB, project string, commits map[string]Commit) *GitLab {
	g := &GitLab{Project: project, ProjectID: 278964}
	g.server = newServer(t, "https://gitlab.com", commits, http.HandlerFunc(g.serve))
	g.URL = g.srv.URL
	return g
}

func gitlabError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"message": message})
}

func (g *GitLab) serve(w http.ResponseWriter, r *http.Request) {
	delay := g.begin()
	defer g.end()
	if delay > 0 {
		time.Sleep(delay)
	}
	if r.Header.Get("User-Agent") == "" {
		g.fault(r, "no User-Agent")
	}
	token, jobToken, _, _ := g.settings()
	private, job := r.Header.Get("PRIVATE-TOKEN"), r.Header.Get("JOB-TOKEN")
	switch {
	case private == "" && job == "":
		g.fault(r, "no PRIVATE-TOKEN or JOB-TOKEN header")
		gitlabError(w, http.StatusUnauthorized, "401 Unauthorized")
		return
	case private != "" && private != token, job != "" && (jobToken == "" || job != jobToken):
		gitlabError(w, http.StatusUnauthorized, "401 Unauthorized")
		return
	}
	if r.Method != http.MethodGet {
		g.fault(r, "method "+r.Method)
		gitlabError(w, http.StatusNotFound, "404 Not Found")
		return
	}
	limit, remaining, used, reset, over := g.take()
	h := w.Header()
	h.Set("RateLimit-Name", "throttle_authenticated_api")
	h.Set("RateLimit-Limit", itoa(limit))
	h.Set("RateLimit-Observed", itoa(used))
	h.Set("RateLimit-Remaining", itoa(remaining))
	h.Set("RateLimit-Reset", unixText(reset))
	h.Set("RateLimit-ResetTime", reset.UTC().Format(http.TimeFormat))
	if over {
		h.Set("Retry-After", itoa(int(max(time.Until(reset), 0).Round(time.Second)/time.Second)))
		h.Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte("Retry later\n"))
		return
	}
	if status := g.nextFailure(); status != 0 {
		gitlabError(w, status, itoa(status)+" "+http.StatusText(status))
		return
	}
	g.route(w, r)
}

// route answers a request that passed every check. The project's id is
// one escaped segment: GitLab routes group/name unescaped elsewhere.
func (g *GitLab) route(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(path, "/api/v4/projects/")
	if !ok {
		gitlabError(w, http.StatusNotFound, "404 Not Found")
		return
	}
	id, rest, _ := strings.Cut(rest, "/")
	project, err := url.PathUnescape(id)
	if err != nil || !strings.EqualFold(project, g.Project) && project != itoa(g.ProjectID) {
		gitlabError(w, http.StatusNotFound, "404 Project Not Found")
		return
	}
	parts := strings.Split(rest, "/")
	switch {
	case rest == "":
		writeJSON(w, http.StatusOK, g.project())
	case len(parts) == 4 && parts[0] == "repository" && parts[1] == "commits" && parts[3] == "merge_requests":
		if !shaPattern.MatchString(parts[2]) {
			g.fault(r, "malformed commit "+parts[2])
			gitlabError(w, http.StatusNotFound, "404 Commit Not Found")
			return
		}
		sha := strings.ToLower(parts[2])
		c, ok := g.commit(sha)
		if !ok {
			gitlabError(w, http.StatusNotFound, "404 Commit Not Found")
			return
		}
		mrs := []any{}
		for _, pr := range c.PRs {
			mrs = append(mrs, g.mergeRequest(sha, pr))
		}
		writeJSON(w, http.StatusOK, mrs)
	default:
		gitlabError(w, http.StatusNotFound, "404 Not Found")
	}
}

func (g *GitLab) project() map[string]any {
	_, _, web, branch := g.settings()
	name := g.Project[strings.LastIndexByte(g.Project, '/')+1:]
	return map[string]any{
		"id": g.ProjectID, "name": name, "path": name, "path_with_namespace": g.Project,
		"default_branch": branch, "web_url": web + "/" + g.Project, "visibility": "public",
	}
}

func (g *GitLab) mergeRequest(sha string, pr PR) map[string]any {
	_, _, web, branch := g.settings()
	target := pr.Base
	if target == "" {
		target = branch
	}
	labels := append([]string{}, pr.Labels...)
	state, merged := "merged", any(timeText(mergedAt))
	if pr.Open {
		state, merged = "opened", nil
	}
	var author any
	if pr.Login != "" {
		author = map[string]any{"id": 1, "username": pr.Login, "name": pr.Login, "state": "active",
			"web_url": web + "/" + pr.Login}
	}
	return map[string]any{
		"id": 84 + pr.Number, "iid": pr.Number, "project_id": g.ProjectID, "title": pr.Title, "description": "",
		"state": state, "created_at": timeText(mergedAt.Add(-24 * time.Hour)), "updated_at": timeText(mergedAt),
		"merged_at": merged, "closed_at": nil, "target_branch": target, "source_branch": "feature",
		"author": author, "labels": labels, "draft": false, "sha": sha, "merge_commit_sha": sha, "squash_commit_sha": nil,
		"web_url": web + "/" + g.Project + "/-/merge_requests/" + itoa(pr.Number),
	}
}
