package forgetest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const aSHA = "0123456789abcdef0123456789abcdef01234567"

// get sends a GET with headers to url and returns the status, the
// headers and the JSON body.
func get(t *testing.T, url string, headers map[string]string) (int, http.Header, any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Del("User-Agent")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if _, ok := headers["User-Agent"]; !ok {
		req.Header.Set("User-Agent", "") // Go's client sends its own otherwise
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var body any
	_ = json.Unmarshal(data, &body)
	if body == nil {
		body = string(data)
	}
	return resp.StatusCode, resp.Header, body
}

func githubHeaders() map[string]string {
	return map[string]string{"User-Agent": "test", "Accept": "application/vnd.github+json",
		"X-GitHub-Api-Version": "2022-11-28", "Authorization": "Bearer " + Token}
}

func TestGitHubRefusesWhatGitHubRefuses(t *testing.T) {
	g := NewGitHub(t, "o/r", map[string]Commit{aSHA: {Login: "ada", PRs: []PR{{Number: 3, Title: "t", Login: "bob", Labels: []string{"bug"}}}}})
	pulls := g.URL + "/repos/o/r/commits/" + aSHA + "/pulls"
	for _, tt := range []struct {
		name    string
		url     string
		change  func(map[string]string)
		status  int
		message string
		fault   bool
	}{
		{"no version", pulls, func(h map[string]string) { delete(h, "X-GitHub-Api-Version") }, 400, "Missing 'X-GitHub-Api-Version' header", true},
		{"other version", pulls, func(h map[string]string) { h["X-GitHub-Api-Version"] = "2021-01-01" }, 400, "Unsupported 'X-GitHub-Api-Version'", true},
		{"no accept", pulls, func(h map[string]string) { delete(h, "Accept") }, 400, "Missing Accept header", true},
		{"no user agent", pulls, func(h map[string]string) { delete(h, "User-Agent") }, 403, "User-Agent", true},
		{"bad token", pulls, func(h map[string]string) { h["Authorization"] = "Bearer nope" }, 401, "Bad credentials", false},
		{"no token", pulls, func(h map[string]string) { delete(h, "Authorization") }, 401, "Requires authentication", true},
		{"malformed sha", g.URL + "/repos/o/r/commits/xyz/pulls", nil, 422, "No commit found for SHA: xyz", true},
		{"unknown sha", g.URL + "/repos/o/r/commits/" + strings.Repeat("f", 40) + "/pulls", nil, 422, "No commit found for SHA", false},
		{"unknown repo", g.URL + "/repos/o/other/commits/" + aSHA + "/pulls", nil, 404, "Not Found", false},
	} {
		h := githubHeaders()
		if tt.change != nil {
			tt.change(h)
		}
		before := len(g.Faults())
		status, _, body := get(t, tt.url, h)
		msg, _ := body.(map[string]any)["message"].(string)
		if status != tt.status || !strings.Contains(msg, tt.message) || status != 403 && body.(map[string]any)["documentation_url"] == nil {
			t.Errorf("%s: %d %v, want %d %q", tt.name, status, body, tt.status, tt.message)
		}
		if faulted := len(g.Faults()) > before; faulted != tt.fault {
			t.Errorf("%s: fault recorded %v, want %v", tt.name, faulted, tt.fault)
		}
	}
}

func TestGitHubServesPullsCommitsAndLimits(t *testing.T) {
	g := NewGitHub(t, "o/r", map[string]Commit{aSHA: {PRs: []PR{{Number: 3, Title: "t", Login: "bob", Labels: []string{"bug"}}}}})
	status, h, body := get(t, g.URL+"/repos/o/r/commits/"+aSHA+"/pulls", githubHeaders())
	pulls, _ := body.([]any)
	if status != 200 || len(pulls) != 1 {
		t.Fatalf("%d %v", status, body)
	}
	pr := pulls[0].(map[string]any)
	if pr["number"] != 3.0 || pr["user"].(map[string]any)["login"] != "bob" || pr["merged_at"] == nil ||
		pr["base"].(map[string]any)["ref"] != "main" || pr["html_url"] != "https://github.com/o/r/pull/3" ||
		pr["labels"].([]any)[0].(map[string]any)["name"] != "bug" {
		t.Errorf("pull %v", pr)
	}
	for _, k := range []string{"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset", "x-ratelimit-resource"} {
		if h.Get(k) == "" {
			t.Errorf("no %s", k)
		}
	}
	if h.Get("x-ratelimit-remaining") != "4999" {
		t.Errorf("remaining %s", h.Get("x-ratelimit-remaining"))
	}
	_, _, body = get(t, g.URL+"/repos/o/r/commits/"+aSHA, githubHeaders())
	if c := body.(map[string]any); c["sha"] != aSHA || c["author"] != nil {
		t.Errorf("commit %v, want a null author", c)
	}
	g.Exhaust(time.Hour)
	status, h, body = get(t, g.URL+"/repos/o/r", githubHeaders())
	if status != 403 || h.Get("x-ratelimit-remaining") != "0" || !strings.Contains(body.(map[string]any)["message"].(string), "API rate limit exceeded") {
		t.Errorf("exhausted: %d %v %v", status, h, body)
	}
	if g.Throttled() != 1 || g.Requests() != 3 || g.Asked(aSHA) != 2 {
		t.Errorf("throttled %d, requests %d, asked %d", g.Throttled(), g.Requests(), g.Asked(aSHA))
	}
}

func TestGitLabServesMergeRequestsByEncodedPath(t *testing.T) {
	g := NewGitLab(t, "group/sub/p", map[string]Commit{aSHA: {PRs: []PR{{Number: 4, Title: "t", Login: "jdoe", Labels: []string{"x"}}}}})
	h := map[string]string{"User-Agent": "test", "PRIVATE-TOKEN": Token}
	status, head, body := get(t, g.URL+"/api/v4/projects/group%2Fsub%2Fp/repository/commits/"+aSHA+"/merge_requests", h)
	mrs, _ := body.([]any)
	if status != 200 || len(mrs) != 1 || mrs[0].(map[string]any)["iid"] != 4.0 || head.Get("RateLimit-Remaining") == "" {
		t.Errorf("%d %v %v", status, body, head)
	}
	if status, _, _ := get(t, g.URL+"/api/v4/projects/group/sub/p/repository/commits/"+aSHA+"/merge_requests", h); status != 404 {
		t.Errorf("an unencoded path: %d, want 404", status)
	}
	h["PRIVATE-TOKEN"] = "nope"
	if status, _, body := get(t, g.URL+"/api/v4/projects/group%2Fsub%2Fp", h); status != 401 || body.(map[string]any)["message"] != "401 Unauthorized" {
		t.Errorf("bad token: %d %v", status, body)
	}
	g.Exhaust(time.Hour)
	h["PRIVATE-TOKEN"] = Token
	if status, head, _ := get(t, g.URL+"/api/v4/projects/group%2Fsub%2Fp", h); status != 429 || head.Get("Retry-After") == "" {
		t.Errorf("exhausted: %d %v", status, head)
	}
}
