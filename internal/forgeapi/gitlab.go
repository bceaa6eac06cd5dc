package forgeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// GitLab's REST API v4 (https://docs.gitlab.com/api/rest/).

type gitlab struct {
	name, token, tokenVar string
	project               string // group/name, groups nested or not
}

// JobTokenVar is the variable of a GitLab CI job's token, which GitLab
// takes in the JOB-TOKEN header; every other token goes in PRIVATE-TOKEN.
const JobTokenVar = "CI_JOB_TOKEN"

func (g *gitlab) header() http.Header {
	h := http.Header{}
	if g.tokenVar == JobTokenVar {
		h.Set("JOB-TOKEN", g.token)
	} else {
		h.Set("PRIVATE-TOKEN", g.token)
	}
	h.Set("Accept", "application/json")
	return h
}

// A project is named by its path URL-encoded as one segment: group%2Fname.
func (g *gitlab) changesPath(sha string) string {
	return "/projects/" + url.PathEscape(g.project) + "/repository/commits/" + sha + "/merge_requests?per_page=100"
}

func (g *gitlab) repoPath() string { return "/projects/" + url.PathEscape(g.project) }

// limits reads RateLimit-Limit, -Remaining and -Reset (Unix seconds), or
// -ResetTime (an HTTP date) when -Reset is missing.
func (g *gitlab) limits(h http.Header, now time.Time) (*provider.Limits, *quota) {
	remaining := provider.HeaderCount(h.Get("RateLimit-Remaining"))
	if remaining < 0 {
		return nil, nil
	}
	q := &quota{Limit: provider.HeaderCount(h.Get("RateLimit-Limit")), Remaining: remaining,
		Reset: epoch(h.Get("RateLimit-Reset")), Resource: h.Get("RateLimit-Name")}
	if q.Reset.IsZero() {
		if t, err := http.ParseTime(h.Get("RateLimit-ResetTime")); err == nil {
			q.Reset = t
		}
	}
	return engineLimits(q, now), q
}

// refused classifies GitLab's refusals: 429 is its rate limit, to wait
// out for Retry-After, else until RateLimit-Reset, else a minute; 401
// and 403 are the token's, which waiting does not mend.
func (g *gitlab) refused(status int, h http.Header, data []byte, limits *provider.Limits, q *quota) *provider.Error {
	e := provider.StatusError(g.name, g.token, status, h, data, errorMessage(data), "", json.Valid(data), limits)
	e.RetryAfter = min(e.RetryAfter, maxForgeWait)
	switch status {
	case http.StatusTooManyRequests:
		e.Kind, e.Type = provider.RateLimited, "rate limit"
		if e.RetryAfter == 0 {
			e.RetryAfter = secondaryWait
			if q != nil && !q.Reset.IsZero() {
				e.RetryAfter = untilReset(q.Reset, serverNow(h))
			}
		}
	case http.StatusUnauthorized:
		e.Kind, e.Hint = provider.Fatal, fmt.Sprintf("Try: a valid token in %s (GitLab refused it; it must be current and may read %s)", g.tokenVar, g.project)
	case http.StatusForbidden:
		e.Kind, e.Hint = provider.Fatal, fmt.Sprintf("Try: a token in %s with the read_api scope on %s", g.tokenVar, g.project)
	}
	return e
}

type gitlabMR struct {
	IID          int               `json:"iid"`
	Title        string            `json:"title"`
	WebURL       string            `json:"web_url"`
	State        string            `json:"state"`
	MergedAt     *string           `json:"merged_at"`
	TargetBranch string            `json:"target_branch"`
	Author       *gitlabUser       `json:"author"`
	Labels       []json.RawMessage `json:"labels"`
}

type gitlabUser struct {
	Username string `json:"username"`
}

func (g *gitlab) check(o op, data []byte) error {
	var err error
	switch o {
	case opChanges:
		_, err = gitlabChanges(data)
	case opRepo:
		_, err = gitlabDefaultBranch(data)
	default:
		err = fmt.Errorf("unknown operation %q", o)
	}
	return err
}

// gitlabChanges reads a list of merge requests. Labels come as names, or
// as objects with a name (with_labels_details).
func gitlabChanges(data []byte) ([]change, error) {
	var mrs []gitlabMR
	if err := json.Unmarshal(data, &mrs); err != nil {
		return nil, err
	}
	changes := make([]change, 0, len(mrs))
	for _, m := range mrs {
		c := change{Number: m.IID, Title: m.Title, URL: m.WebURL, Base: m.TargetBranch,
			Merged: m.State == "merged" || m.MergedAt != nil && *m.MergedAt != ""}
		if m.Author != nil {
			c.Login = m.Author.Username
		}
		for _, raw := range m.Labels {
			var name string
			if json.Unmarshal(raw, &name) != nil {
				var detailed struct {
					Name string `json:"name"`
				}
				_ = json.Unmarshal(raw, &detailed) // neither: no label
				name = detailed.Name
			}
			c.Labels = append(c.Labels, name)
		}
		changes = append(changes, c)
	}
	return changes, nil
}

func gitlabDefaultBranch(data []byte) (string, error) {
	var p struct {
		DefaultBranch string `json:"default_branch"`
	}
	err := json.Unmarshal(data, &p)
	return p.DefaultBranch, err
}

// gitlabLoginPattern is what GitLab allows of a username: letters, digits,
// _, - and ., not starting with - or ., at most 255.
var gitlabLoginPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$`)
