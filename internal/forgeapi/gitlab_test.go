package forgeapi_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/forgeapi"
	"github.com/digest-cli/digest/internal/forgeapi/forgetest"
)

var gitlabRepo = forge.Forge{Kind: forge.GitLab, Base: "https://gitlab.com/gitlab-org/cli-tools/glab"}

func newGitLabClient(t *testing.T, fake *forgetest.GitLab, tok forgeapi.Token, o forgeapi.Options) *forgeapi.Client {
	t.Helper()
	o.APIURL = fake.URL + "/api/v4"
	if o.RPM == 0 {
		o.RPM = 1e6
	}
	c, err := forgeapi.New(gitlabRepo, tok, openStore(t, filepath.Join(t.TempDir(), "digest.db")), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var gitlabToken = forgeapi.Token{Value: forgetest.Token, Var: "GITLAB_TOKEN"}

func TestLookupGitLabNamesMergeRequests(t *testing.T) {
	fake := forgetest.NewGitLab(t, "gitlab-org/cli-tools/glab", map[string]forgetest.Commit{
		sha(1): {PRs: []forgetest.PR{{Number: 7, Title: "Add mr list --draft", Login: "jdoe", Labels: []string{"feature", "cli"}}}},
		sha(2): {Login: "nobody-asks", PRs: []forgetest.PR{{Number: 8, Title: "open", Login: "x", Open: true}}},
		sha(3): {},
	})
	c := newGitLabClient(t, fake, gitlabToken, forgeapi.Options{})
	got := lookup(t, c, sha(1), sha(2), sha(3), sha(4))
	want := map[string]forgeapi.Info{
		sha(1): {Login: "jdoe", PR: 7, PRTitle: "Add mr list --draft", PRURL: "https://gitlab.com/gitlab-org/cli-tools/glab/-/merge_requests/7", Labels: []string{"feature", "cli"}, Known: true},
		sha(2): {}, sha(3): {}, sha(4): {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Lookup:\n got %+v\nwant %+v", got, want)
	}
	// GitLab names no account for a commit's email: nothing more is asked.
	if fake.Requests() != 4 {
		t.Errorf("%d requests, want 4", fake.Requests())
	}
	noFaults(t, fake.Faults())
}

func TestGitLabJobToken(t *testing.T) {
	fake := forgetest.NewGitLab(t, "gitlab-org/cli-tools/glab", map[string]forgetest.Commit{sha(1): {PRs: []forgetest.PR{{Number: 1, Title: "t", Login: "ci"}}}})
	fake.SetToken("glpat-notTheOneTheClientHas0000")
	fake.SetJobToken("job-token-of-this-pipeline-0000")
	c := newGitLabClient(t, fake, forgeapi.Token{Value: "job-token-of-this-pipeline-0000", Var: "CI_JOB_TOKEN"}, forgeapi.Options{})
	if got := lookup(t, c, sha(1)); got[sha(1)].PR != 1 {
		t.Errorf("answer %+v", got[sha(1)])
	}
	noFaults(t, fake.Faults())
}

func TestGitLabBadToken(t *testing.T) {
	fake := forgetest.NewGitLab(t, "gitlab-org/cli-tools/glab", map[string]forgetest.Commit{sha(1): {}})
	fake.SetToken("glpat-notTheOneTheClientHas0000")
	c := newGitLabClient(t, fake, gitlabToken, forgeapi.Options{})
	_, err := c.Lookup(context.Background(), []string{sha(1), sha(2)})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401: 401 Unauthorized. Try: a valid token in GITLAB_TOKEN") || strings.Contains(err.Error(), forgetest.Token) {
		t.Errorf("Lookup error %v", err)
	}
	if fake.Requests() != 1 {
		t.Errorf("%d requests, want 1", fake.Requests())
	}
}

func TestGitLabRateLimitWaitsForRetryAfter(t *testing.T) {
	fake := forgetest.NewGitLab(t, "gitlab-org/cli-tools/glab", map[string]forgetest.Commit{sha(1): {PRs: []forgetest.PR{{Number: 2, Title: "t", Login: "ada"}}}})
	fake.Exhaust(time.Second)
	c := newGitLabClient(t, fake, gitlabToken, forgeapi.Options{})
	start := time.Now()
	if got := lookup(t, c, sha(1)); got[sha(1)].PR != 2 {
		t.Errorf("answer %+v", got[sha(1)])
	}
	if fake.Throttled() != 1 || fake.Requests() != 2 || time.Since(start) < 500*time.Millisecond {
		t.Errorf("%d refused of %d requests in %s: want one refusal, then the wait", fake.Throttled(), fake.Requests(), time.Since(start))
	}
}

func TestGitLabUnknownProjectIsNothingKnown(t *testing.T) {
	fake := forgetest.NewGitLab(t, "another/project", nil)
	var log logBuffer
	o := forgeapi.Options{APIURL: fake.URL + "/api/v4", RPM: 1e6}
	c, err := forgeapi.New(gitlabRepo, gitlabToken, openStore(t, filepath.Join(t.TempDir(), "digest.db")), log.logger(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := lookup(t, c, sha(1), sha(2))
	if len(got) != 2 || got[sha(1)].Known || got[sha(2)].Known {
		t.Errorf("Lookup = %+v, want both unknown", got)
	}
	if n := strings.Count(log.String(), "knows no repository gitlab-org/cli-tools/glab, or GITLAB_TOKEN may not read it"); n != 1 {
		t.Errorf("the missing project was told %d times, want once:\n%s", n, log.String())
	}
}

func TestDefaultBranchIsAskedOnceWhenRequestsDisagree(t *testing.T) {
	two := func(n int) forgetest.Commit {
		return forgetest.Commit{PRs: []forgetest.PR{
			{Number: 10 * n, Title: "into stable", Login: "a", Base: "stable"},
			{Number: 10*n + 1, Title: "into the default", Login: "b", Base: "trunk"},
		}}
	}
	fake := forgetest.NewGitLab(t, "gitlab-org/cli-tools/glab", map[string]forgetest.Commit{sha(1): two(1), sha(2): two(2)})
	fake.SetDefaultBranch("trunk")
	c := newGitLabClient(t, fake, gitlabToken, forgeapi.Options{Concurrency: 1})
	got := lookup(t, c, sha(1), sha(2))
	if got[sha(1)].PR != 11 || got[sha(2)].PR != 21 {
		t.Errorf("Lookup = %+v, want the requests into trunk", got)
	}
	if fake.Requests() != 3 {
		t.Errorf("%d requests, want 3: the project once", fake.Requests())
	}
	// Told the branch, the client asks nothing of the project.
	fake2 := forgetest.NewGitLab(t, "gitlab-org/cli-tools/glab", map[string]forgetest.Commit{sha(1): two(1)})
	c2 := newGitLabClient(t, fake2, gitlabToken, forgeapi.Options{DefaultBranch: "stable"})
	if got := lookup(t, c2, sha(1)); got[sha(1)].PR != 10 || fake2.Requests() != 1 {
		t.Errorf("Lookup = %+v in %d requests, want the request into stable in one", got, fake2.Requests())
	}
}

func TestRequestsArePacedByRPM(t *testing.T) {
	commits := map[string]forgetest.Commit{}
	var all []string
	for n := range 6 {
		all = append(all, sha(n))
		commits[sha(n)] = forgetest.Commit{PRs: []forgetest.PR{{Number: n + 1, Title: fmt.Sprint(n), Login: "ada"}}}
	}
	fake := forgetest.NewGitLab(t, "gitlab-org/cli-tools/glab", commits)
	c := newGitLabClient(t, fake, gitlabToken, forgeapi.Options{RPM: 600, Concurrency: 6})
	start := time.Now()
	lookup(t, c, all...)
	// 600 a minute, less the engine's margin: a request every 100 ms or
	// more, the first at once.
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("6 requests at 600 a minute took %s, want at least 500ms", d)
	}
}
