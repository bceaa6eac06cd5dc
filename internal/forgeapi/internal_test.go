package forgeapi

import (
	"context"
	"net/http"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

func TestAPIURLFollowsTheForge(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "digest.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tok := Token{Value: "secret-token-value-000", Var: "GITHUB_TOKEN"}
	for _, tt := range []struct {
		f    forge.Forge
		o    Options
		want string
	}{
		{forge.Forge{Kind: forge.GitHub, Base: "https://github.com/spf13/cobra"}, Options{}, "https://api.github.com"},
		{forge.Forge{Kind: forge.GitHub, Base: "https://ghe.example.com/team/tool"}, Options{}, "https://ghe.example.com/api/v3"},
		{forge.Forge{Kind: forge.GitHub, Base: "https://github.com/spf13/cobra"}, Options{APIURL: "https://proxy.example/github/"}, "https://proxy.example/github"},
		{forge.Forge{Kind: forge.GitLab, Base: "https://gitlab.example.com/group/sub/project"}, Options{}, "https://gitlab.example.com/api/v4"},
	} {
		c, err := New(tt.f, tok, st, nil, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if c.rest.base != tt.want {
			t.Errorf("%s: API %s, want %s", tt.f.Base, c.rest.base, tt.want)
		}
	}
}

func TestPathsEscapeTheRepository(t *testing.T) {
	g := &github{repo: "owner/name with space"}
	if got := g.changesPath("abc"); got != "/repos/owner/name%20with%20space/commits/abc/pulls?per_page=100" {
		t.Errorf("GitHub: %s", got)
	}
	l := &gitlab{project: "group/sub/name"}
	if got := l.changesPath("abc"); got != "/projects/group%2Fsub%2Fname/repository/commits/abc/merge_requests?per_page=100" {
		t.Errorf("GitLab: %s", got)
	}
}

func TestAnswersAreKeptForEverOnlyWhenTheyNameARequest(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "digest.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := New(forge.Forge{Kind: forge.GitHub, Base: "https://github.com/a/b"}, Token{Value: "t", Var: "GITHUB_TOKEN"}, st, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	known, unknown := c.key(strings.Repeat("a", 40)), c.key(strings.Repeat("b", 40))
	if err := c.save(ctx, known, Info{PR: 3, PRTitle: "t", Known: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.save(ctx, unknown, Info{Login: "ada", Known: true}); err != nil {
		t.Fatal(err)
	}
	rows, err := st.SQL().QueryContext(ctx, `SELECT key, expires_at FROM forge_answers`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	expires := map[string]int64{}
	for rows.Next() {
		var k string
		var e int64
		if err := rows.Scan(&k, &e); err != nil {
			t.Fatal(err)
		}
		expires[k] = e
	}
	day := time.Now().Add(DefaultUnknownTTL).UnixMilli()
	if expires[known] != 0 || expires[unknown] < day-60_000 || expires[unknown] > day+60_000 {
		t.Errorf("expiries %v: want 0 for the request, a day from now for the rest", expires)
	}
	// The key is the forge, the repository and the commit, whatever the
	// spelling of the repository's page.
	other := &Client{kind: forge.GitHub, forge: forge.Forge{Kind: forge.GitHub, Base: "https://GitHub.com/A/B/"}}
	if other.key(strings.Repeat("a", 40)) != known {
		t.Error("two spellings of one repository gave two keys")
	}
}

func TestRefusedTellsRateLimitsFromPermissions(t *testing.T) {
	g := &github{name: "GitHub API", token: "tok", tokenVar: "GITHUB_TOKEN", repo: "a/b"}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	header := func(kv ...string) http.Header {
		h := http.Header{"Date": {now.Format(http.TimeFormat)}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	reset := func(d time.Duration) string { return unixString(now.Add(d)) }
	for _, tt := range []struct {
		name   string
		status int
		h      http.Header
		body   string
		typ    string
		wait   time.Duration
	}{
		{"primary 403", 403, header("x-ratelimit-remaining", "0", "x-ratelimit-reset", reset(90*time.Second)), `{"message":"API rate limit exceeded for user ID 1."}`, "rate limit", 91 * time.Second},
		{"primary 429", 429, header("x-ratelimit-remaining", "0", "x-ratelimit-reset", reset(10*time.Second)), `{"message":"API rate limit exceeded"}`, "rate limit", 11 * time.Second},
		{"primary in a year", 403, header("x-ratelimit-remaining", "0", "x-ratelimit-reset", reset(365*24*time.Hour)), `{}`, "rate limit", maxForgeWait},
		{"secondary with retry-after", 403, header("x-ratelimit-remaining", "4000", "retry-after", "30"), `{"message":"You have exceeded a secondary rate limit."}`, "secondary rate limit", 30 * time.Second},
		{"secondary without", 403, header("x-ratelimit-remaining", "4000"), `{"message":"You have exceeded a secondary rate limit."}`, "secondary rate limit", time.Minute},
		{"429 alone", 429, header(), ``, "secondary rate limit", time.Minute},
		{"permission", 403, header("x-ratelimit-remaining", "4000"), `{"message":"Resource not accessible by personal access token"}`, "", 0},
	} {
		limits, q := g.limits(tt.h, now)
		e := g.refused(tt.status, tt.h, []byte(tt.body), limits, q)
		if e.Type != tt.typ || e.RetryAfter != tt.wait {
			t.Errorf("%s: type %q, wait %s; want %q, %s", tt.name, e.Type, e.RetryAfter, tt.typ, tt.wait)
		}
		if tt.typ == "" && e.Hint == "" {
			t.Errorf("%s: no hint", tt.name)
		}
	}
}

func unixString(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// checkInfo fails when info holds what must not reach release notes.
func checkInfo(t *testing.T, c *Client, info Info) {
	t.Helper()
	if strings.ContainsAny(info.PRTitle, "\n\r\x1b") || len(info.PRTitle) > maxTitle || !utf8.ValidString(info.PRTitle) {
		t.Errorf("title %q", info.PRTitle)
	}
	if info.Login != "" && !githubLoginPattern.MatchString(info.Login) && !gitlabLoginPattern.MatchString(info.Login) {
		t.Errorf("login %q", info.Login)
	}
	if info.PR > 0 && !strings.HasPrefix(info.PRURL, c.forge.Base+"/") {
		t.Errorf("URL %q outside %s", info.PRURL, c.forge.Base)
	}
	if len(info.Labels) > maxLabels {
		t.Errorf("%d labels", len(info.Labels))
	}
	for _, l := range info.Labels {
		if l == "" || len(l) > maxLabel || strings.ContainsAny(l, "\n\x1b") {
			t.Errorf("label %q", l)
		}
	}
}

// FuzzGitHubAnswer reads any body as GitHub's pull requests and commits:
// nothing panics, and what comes out is bounded and safe to show.
func FuzzGitHubAnswer(f *testing.F) {
	f.Add([]byte(`[{"number":1,"title":"t","html_url":"https://github.com/a/b/pull/1","user":{"login":"ada"},"labels":[{"name":"x"}],"merged_at":"2026-01-01T00:00:00Z","base":{"ref":"main","repo":{"default_branch":"main"}}}]`))
	f.Add([]byte(`[{"number":2,"merged_at":"x","base":{"ref":"b"}},{"number":3,"merged_at":"y","base":{"ref":"main"}}]`))
	f.Add([]byte(`[{"sha":"aaaa","author":null}]`))
	f.Add([]byte(`{"message":"Not Found"}`))
	c := &Client{kind: forge.GitHub, forge: forge.Forge{Kind: forge.GitHub, Base: "https://github.com/a/b"}, branchKnown: true, defaultBranch: "main"}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = githubLogin(data, "aaaa")
		_, _ = githubDefaultBranch(data)
		changes, err := githubChanges(data)
		if err != nil {
			return
		}
		pick, err := c.choose(context.Background(), changes)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range changes {
			checkInfo(t, c, c.infoOf(ch))
		}
		if pick != nil && !pick.Merged {
			t.Errorf("picked an unmerged request %+v", pick)
		}
	})
}

// FuzzGitLabAnswer is FuzzGitHubAnswer for GitLab's merge requests.
func FuzzGitLabAnswer(f *testing.F) {
	f.Add([]byte(`[{"iid":7,"title":"t","web_url":"https://gitlab.com/g/p/-/merge_requests/7","state":"merged","author":{"username":"jdoe"},"labels":["a",{"name":"b"},3],"target_branch":"main"}]`))
	f.Add([]byte(`[{"iid":-1,"state":"merged"}]`))
	c := &Client{kind: forge.GitLab, forge: forge.Forge{Kind: forge.GitLab, Base: "https://gitlab.com/g/p"}, branchKnown: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = gitlabDefaultBranch(data)
		changes, err := gitlabChanges(data)
		if err != nil {
			return
		}
		if _, err := c.choose(context.Background(), changes); err != nil {
			t.Fatal(err)
		}
		for _, ch := range changes {
			checkInfo(t, c, c.infoOf(ch))
		}
	})
}

// FuzzRateLimitHeaders reads any rate-limit headers, of either forge: no
// wait they ask for is negative or longer than maxForgeWait.
func FuzzRateLimitHeaders(f *testing.F) {
	f.Add(403, "0", "5000", "1777777777", "", "Fri, 01 May 2026 12:00:00 GMT", `{"message":"API rate limit exceeded"}`)
	f.Add(429, "12", "60", "99999999999999", "120", "", "Retry later")
	f.Add(403, "-1", "x", "", "Fri, 01 May 2026 12:00:00 GMT", "garbage", `{"message":["a"]}`)
	f.Add(429, "0", "", "", "1e300", "", "")
	gh := &github{name: "GitHub API", token: "tok", tokenVar: "GITHUB_TOKEN", repo: "a/b"}
	gl := &gitlab{name: "GitLab API", token: "tok", tokenVar: "GITLAB_TOKEN", project: "g/p"}
	f.Fuzz(func(t *testing.T, status int, remaining, limit, reset, retryAfter, date, body string) {
		if status < 100 || status > 599 {
			return
		}
		h := http.Header{}
		for _, k := range []string{"x-ratelimit-remaining", "RateLimit-Remaining"} {
			h.Set(k, remaining)
		}
		for _, k := range []string{"x-ratelimit-limit", "RateLimit-Limit"} {
			h.Set(k, limit)
		}
		for _, k := range []string{"x-ratelimit-reset", "RateLimit-Reset", "RateLimit-ResetTime"} {
			h.Set(k, reset)
		}
		h.Set("Retry-After", retryAfter)
		h.Set("Date", date)
		now := serverNow(h)
		for _, w := range []wire{gh, gl} {
			limits, q := w.limits(h, now)
			if limits != nil && (limits.RequestsReset < 0 || limits.RequestsReset > maxForgeWait || limits.RequestsLimit != -1) {
				t.Errorf("limits %+v", limits)
			}
			e := w.refused(status, h, []byte(body), limits, q)
			if e.RetryAfter < 0 || e.RetryAfter > maxForgeWait {
				t.Errorf("%T: wait %s", w, e.RetryAfter)
			}
			if strings.Contains(e.Error(), "\n") {
				t.Errorf("%T: error on several lines: %q", w, e.Error())
			}
		}
		_ = errorMessage([]byte(body))
	})
}

// FuzzStoredAnswer reads any stored body: one that decodes encodes back
// to the same answer.
func FuzzStoredAnswer(f *testing.F) {
	f.Add([]byte(`{"login":"ada","pr":3,"title":"t","url":"https://github.com/a/b/pull/3","labels":["x"]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"pr":-4}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		info, err := decodeInfo(body)
		if err != nil {
			return
		}
		again, err := encodeInfo(info)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeInfo(again)
		if err != nil || !reflect.DeepEqual(back, info) {
			t.Errorf("%q: %+v, then %+v (%v)", body, info, back, err)
		}
	})
}
