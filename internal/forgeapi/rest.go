package forgeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// The engine paces and retries providers; a forge's REST API is sent
// through it as one, so that its calls have the one retry loop, the
// pacing, the model-wide pause on a rate limit, the breaker and the
// longest wait every model has. A REST call travels as a
// provider.Request whose System names the operation and whose one
// message is the path to GET; the answer's Text is an envelope (see
// envelope) holding the status and the body, read and checked here.

// op names a REST operation, and how its body is checked.
type op string

const (
	opChanges op = "changes" // the pull or merge requests that hold a commit
	opLogin   op = "login"   // the commit, for its author's login
	opRepo    op = "repo"    // the repository, for its default branch
)

// request is the engine's request for op on path.
func request(o op, path string) provider.Request {
	return provider.Request{System: string(o), Messages: []provider.Message{{Role: "user", Content: path}}}
}

// envelope is what a call's answer carries back through the engine: the
// status, and the body when the forge answered (checked to decode), or
// the forge's message when it knew nothing of what was asked (404, 422).
type envelope struct {
	Status  int             `json:"status"`
	Body    json.RawMessage `json:"body,omitempty"`
	Message string          `json:"message,omitempty"`
}

// wire is what a forge's REST API does its own way.
type wire interface {
	// header is every request's headers: the token, what is accepted.
	header() http.Header
	// limits reads the rate-limit headers of an answer as the engine's
	// Limits, and the quota they tell of for messages; nil when none.
	limits(h http.Header, now time.Time) (*provider.Limits, *quota)
	// refused classifies an answer that is neither a success nor a
	// "nothing known": a rate limit (RateLimited, with the wait it asks
	// for in RetryAfter), the token's fault (Fatal), or the status's kind.
	refused(status int, h http.Header, data []byte, limits *provider.Limits, q *quota) *provider.Error
	// check decodes a success body of o, saying what is wrong with it.
	check(o op, data []byte) error
}

// quota is a forge's rate-limit state as its headers last told it.
type quota struct {
	Limit, Remaining int
	Reset            time.Time // zero: not told
	Resource         string
	// Secondary is set on an answer refused by a secondary limit
	// (GitHub's), which the reset does not end.
	Secondary bool
	Wait      time.Duration // what the refusal asked for
}

// maxForgeWait bounds any wait a forge's headers ask for: GitHub's and
// GitLab's windows are an hour at most, and a reset in a year (a broken
// header, a hostile server) must not hold the run for it.
const maxForgeWait = time.Hour

// rest is a forge's REST API as the engine's provider.
type rest struct {
	name  string // "GitHub API (api.github.com)", in errors
	base  string // the API's base URL
	token string // scrubbed from anything the forge writes back
	wire  wire
	http  *http.Client
	last  atomic.Pointer[quota]
}

var _ provider.Provider = (*rest)(nil)

// Complete makes one GET; the engine owns every retry.
func (r *rest) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	if len(req.Messages) != 1 {
		return provider.Response{}, &provider.Error{Provider: r.name, Kind: provider.Permanent, Message: "a REST call holds one path"}
	}
	o, path := op(req.System), req.Messages[0].Content
	resp, data, err := provider.Send(ctx, r.http, r.name, r.base, http.MethodGet, r.base+path, r.wire.header(), "", nil)
	if err != nil {
		return provider.Response{}, err
	}
	now := serverNow(resp.Header)
	limits, q := r.wire.limits(resp.Header, now)
	if q != nil {
		r.last.Store(q)
	}
	env := envelope{Status: resp.StatusCode}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		if err := r.wire.check(o, data); err != nil {
			return provider.Response{}, provider.UnreadableBody(r.name, resp.StatusCode, limits, data, err)
		}
		env.Body = json.RawMessage(data)
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnprocessableEntity:
		env.Message = provider.CleanMessage(errorMessage(data), r.token)
	default:
		e := r.wire.refused(resp.StatusCode, resp.Header, data, limits, q)
		if q != nil && e.Kind == provider.RateLimited {
			refusal := *q
			refusal.Wait = e.RetryAfter
			refusal.Secondary = e.Type == "secondary rate limit"
			r.last.Store(&refusal)
		}
		return provider.Response{}, e
	}
	text, err := json.Marshal(env)
	if err != nil {
		return provider.Response{}, err
	}
	return provider.Response{Text: string(text), Limits: limits}, nil
}

// serverNow is the time the answer was made, by the server's Date
// header: a reset time is measured from it, so that the local clock's
// error does not enter the wait. Without one, the local clock.
func serverNow(h http.Header) time.Time {
	if t, err := http.ParseTime(h.Get("Date")); err == nil {
		return t
	}
	return time.Now()
}

// errorMessage is the message of a forge's JSON error ("Not Found",
// "404 Project Not Found"), or its plain text.
func errorMessage(data []byte) string {
	var body struct {
		Message json.RawMessage `json:"message"`
		Error   string          `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil {
		if s := strings.TrimSpace(string(data)); !strings.HasPrefix(s, "<") {
			return s
		}
		return ""
	}
	var s string
	if json.Unmarshal(body.Message, &s) == nil && s != "" {
		return s
	}
	if len(body.Message) > 0 {
		return string(body.Message) // GitLab's validation errors are objects
	}
	return body.Error
}

// untilReset is the wait until reset, an epoch second, from now: at least
// a second (the reset is rounded to one, and a server's clock may run
// ahead of the reset it gave), at most maxForgeWait. The bound comes
// before the added second: a reset centuries away saturates Sub at the
// largest Duration, which one more second would wrap to the smallest.
func untilReset(reset, now time.Time) time.Duration {
	return min(max(reset.Sub(now), 0), maxForgeWait-time.Second) + time.Second
}

// epoch reads a header of Unix seconds; zero when absent or unreadable.
func epoch(s string) time.Time {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n > 1<<40 {
		return time.Time{}
	}
	return time.Unix(n, 0)
}

// engineLimits is q in the engine's terms. A forge's limit counts per
// hour (GitHub) or per a window of its own, not per minute as the engine
// reads RequestsLimit, so it is not told: only that nothing is left, and
// until when, which pauses every call.
func engineLimits(q *quota, now time.Time) *provider.Limits {
	l := provider.NoLimits()
	l.RequestsRemaining = q.Remaining
	if q.Remaining == 0 && !q.Reset.IsZero() {
		l.RequestsReset = untilReset(q.Reset, now)
	}
	return &l
}

// decodeEnvelope reads an answer's envelope.
func decodeEnvelope(text string) (envelope, error) {
	var env envelope
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		return env, fmt.Errorf("an answer's envelope does not decode: %w", err)
	}
	return env, nil
}

// found reports whether the forge answered with a body.
func (e envelope) found() bool { return e.Status >= 200 && e.Status <= 299 }
