// Package fakeprovider is an in-process fake LLM server for tests and
// benchmarks: an httptest server that speaks the OpenAI chat-completions
// and the Anthropic messages wire formats, enforces RPM and TPM limits over
// a scaled-down window, reports them in each provider's headers, and
// injects faults from a seeded source. Only tests and the .ci benchmarks
// import it.
//
// # Use
//
//	srv := fakeprovider.Start(t, fakeprovider.Config{
//		Window: time.Second, RPM: 20, TPM: 20_000,
//		SendLimitHeaders: true, RetryAfter: true,
//		APIKey: "sk-test",
//	})
//	// OpenAI clients:    base srv.OpenAIBaseURL() (URL+"/v1"); POST {base}/chat/completions, Authorization: Bearer KEY
//	// Anthropic clients: base srv.AnthropicBaseURL() (URL);   POST {base}/v1/messages, x-api-key: KEY, anthropic-version
//	// Responses clients: base srv.OpenAIBaseURL();             POST {base}/responses, as OpenAI clients
//	st := srv.Stats()         // counts, admissions, per-window counts
//	reqs := srv.Requests()    // what the clients sent, parsed
//
// The server closes on t.Cleanup (or with Close); requests still held by a
// hang fault or by Latency end then, so no goroutine outlives it.
//
// # Order of checks
//
// Each request goes through, in order: the path (404; a method other than
// POST gets 405), the key when Config.APIKey is set (401), for Anthropic the
// anthropic-version header (400), the body (400 for invalid JSON, a missing
// model or messages, for Anthropic a missing max_tokens, bad roles, an
// out-of-range temperature or max_tokens, and "stream": true, which the fake
// does not speak), the rate limits (429), then one fault draw (500, 503 or
// 529, a truncated 200, a hang) and finally Latency and the answer. Each
// error has the provider's real body: {"error":{"message","type","param",
// "code"}} for OpenAI, {"type":"error","error":{"type","message"}} for
// Anthropic. Unknown request fields are ignored.
//
// # Limits
//
// RPM and TPM are allowances per Config.Window (a minute unless a test
// scales it down); 0 leaves that dimension unlimited. Config.Limiter picks
// how they are enforced:
//
//   - SlidingWindow (the default) admits a request only if the requests
//     admitted in the last Window, plus this one, number at most RPM, and
//     their tokens plus this one's at most TPM. So no interval of length
//     Window ever holds more than RPM admitted requests or TPM admitted
//     tokens: the strictest reading of a per-minute limit, and one a client
//     that is safe against it is safe against a bucket too.
//   - TokenBucket is the model OpenAI and Anthropic document: a bucket of
//     capacity RPM (TPM) that refills continuously at RPM (TPM) per Window
//     and starts full (implemented exactly, as GCRA). A full bucket plus a
//     window's refill lets almost twice the limit through in one Window.
//
// A request's tokens are estimated when it arrives, as OpenAI does:
// max_tokens (max_completion_tokens for OpenAI, 0 when neither is given)
// plus the prompt tokens, where the prompt is the system text followed by
// every message's text, and its tokens are ceil(characters/4), characters
// being runes (Config.CountTokens replaces that count). Server.Estimate
// computes the same for a provider.Request. The estimate is what TPM
// charges; it is never corrected by the actual answer. A request whose
// estimate alone exceeds TPM can never be admitted: it gets a 429 without
// retry-after ("Request too large"). Rejected requests consume nothing.
// Admitted requests consume their share whatever their outcome (fault,
// hang, canceled client), as on the real services.
//
// A 429 names the limit that refused it: OpenAI type "requests" or
// "tokens" with code "rate_limit_exceeded"; Anthropic "rate_limit_error".
// With Config.RetryAfter, it carries the exact time until the request would
// be admitted (in both dimensions): OpenAI retry-after (whole seconds,
// rounded up) and retry-after-ms (rounded up); Anthropic retry-after only,
// as the real service. The OpenAI message also says "Please try again in
// 1.234s" like the real one.
//
// # Headers
//
// With Config.SendLimitHeaders every response to a request that reached
// the limiter (200s, 429s, injected faults; not 400, 401 or 404) carries the
// limit state just after the request was decided (so a request that was
// admitted already counts), for each limited dimension:
//
//	OpenAI:    x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests
//	           x-ratelimit-limit-tokens,   x-ratelimit-remaining-tokens,   x-ratelimit-reset-tokens
//	Anthropic: anthropic-ratelimit-requests-limit, -requests-remaining, -requests-reset
//	           anthropic-ratelimit-tokens-limit,   -tokens-remaining,   -tokens-reset
//
// limit is RPM or TPM; remaining is what could be admitted right now (the
// limit minus what the last Window admitted, or the bucket's level); reset
// is when remaining is back at the limit if nothing else is admitted: when
// the newest admission leaves the window, or when the bucket is full. The
// OpenAI reset is a Go duration rounded up to the millisecond ("1.5s",
// "250ms", "0s"); the Anthropic reset is an RFC 3339 UTC time with
// milliseconds. The Anthropic input-tokens and output-tokens headers are
// not sent: there is one TPM. Note that reset is not the wait before the
// next request: under SlidingWindow one slot frees when the oldest
// admission leaves the window, which retry-after reports.
//
// # Faults
//
// Each admitted request draws one number from a math/rand/v2 PCG source
// seeded with Faults.Seed; the probabilities are consecutive, exclusive
// slices of [0,1): Status500, then Status5xx (529 overloaded_error for
// Anthropic, 503 for OpenAI), Malformed200 (a 200 whose JSON body is cut in
// half, with a matching Content-Length), Hang (no answer until the client
// disconnects or the server closes). The draws follow admission order, so a
// client that sends one request at a time sees the same faults every run.
//
// # Answers
//
// Config.Answer writes the assistant's text; by default, when the messages
// hold commits in the prompt package's format, the answer is the JSON array
// prompt.FormatAnswer writes with one deterministic summary per commit
// ("Summary of <hash[:12]>: <subject>"), otherwise "fake answer: " and the
// start of the last user message. ShuffleBatch reorders any answer that is
// a JSON array of commit answers (never leaving the prompt's order) and
// DropOne leaves out its last commit when it has at least two, so a commit
// asked about again alone is answered. An answer longer than max_tokens is
// cut to fit, with finish_reason "length" / stop_reason "max_tokens". Usage
// reports the prompt tokens (as estimated above, without max_tokens) and
// the answer's tokens, at least 1.
//
// # Asserting "no request beyond the limit in steady state"
//
// Under SlidingWindow the server itself never admits beyond the limit, so
// the signal is the 429s: a client that stays within the limit never gets
// one. Give the fake the limits the client is told, let the client learn at
// start if it must, and count the 429s after the first window:
//
//	cfg := fakeprovider.Config{Window: 500 * time.Millisecond, RPM: 10, TPM: 5000, SendLimitHeaders: true, RetryAfter: true}
//	srv := fakeprovider.Start(t, cfg)
//	start := time.Now()
//	// ... run the engine with RPM 10, TPM 5000 per 500ms against srv ...
//	st := srv.Stats()
//	if n := st.RateLimitedSince(start.Add(cfg.Window)); n > 0 {
//		t.Errorf("%d requests beyond the limit in steady state", n)
//	}
//	req, tok := st.MaxInWindow(time.Time{}) // most admitted in any Window: <= RPM, TPM
//
// Stats.Windows gives the admissions and 429s per fixed window from Start,
// to check that the client also uses the capacity it has. Under TokenBucket
// MaxInWindow may legitimately reach almost twice the limit; a client pacing
// with its own bucket at exactly the server's rate can still see an
// occasional 429 from network jitter, so give it a little headroom there.
//
// # Responses API
//
// POST /v1/responses (ResponsesPath) speaks OpenAI's Responses API with
// the OpenAI format's key check, limits, faults and headers; it is
// recorded with Format OpenAI and its own Path. Its body is model, input
// (a string, or message items {"role", "content"} whose content is a
// string or input_text/output_text parts; system and developer items join
// the instructions), instructions, max_output_tokens (at least 16),
// temperature, top_p, reasoning {effort} and store. It refuses what the
// real API refuses, in its words: a missing model or input; messages,
// max_completion_tokens, reasoning_effort and response_format (400
// unsupported_parameter, "this parameter has moved to ..."); max_tokens,
// seed and any other key CreateResponse lacks (400 unknown_parameter); a
// temperature or top_p other than 1 for a model provider.RulesFor marks
// NoTemperature, and a reasoning.effort for an OpenAI model that takes
// none (400 "Unsupported parameter: '...' is not supported with this
// model."). TPM counts its max_output_tokens plus the tokens of its
// instructions and input texts. Its answer is a Response object with the
// chat answer's text (Config.Answer, ShuffleBatch, DropOne) in an output
// message's output_text, cut to max_output_tokens with status
// "incomplete" and incomplete_details.reason "max_output_tokens". A last
// user message holding RefuseTrigger ("FAKE_REFUSE") is answered with a
// refusal content item (RefusalText) instead; one holding
// ContentFilterTrigger ("FAKE_CONTENT_FILTER") with half the answer,
// incomplete for "content_filter". Usage is input_tokens (the prompt, as
// for chat), output_tokens, and input_tokens_details.cached_tokens as
// OpenAI's prompt cache reports it: the longest prefix of the prompt (the
// instructions, then each input message in turn) that a request answered
// before began with, when it counts 1,024 tokens or more, rounded down to
// a multiple of 128; 0 otherwise.
//
// The chat path refuses a model OpenAI serves on the Responses API alone
// (pro, codex and deep-research models) as OpenAI does: 404 invalid_request_error,
// param "model", code null, "This model is only supported in v1/responses
// and not in v1/chat/completions."
//
// # Batch APIs
//
// The fake also serves both providers' batch endpoints, under their real
// paths and bodies:
//
//	OpenAI:    POST /v1/files (multipart, purpose=batch), POST /v1/batches,
//	           GET /v1/batches (list), GET /v1/batches/{id},
//	           POST /v1/batches/{id}/cancel, GET /v1/files/{id}/content
//	Anthropic: POST /v1/messages/batches, GET /v1/messages/batches (list),
//	           GET /v1/messages/batches/{id},
//	           POST /v1/messages/batches/{id}/cancel,
//	           GET /v1/messages/batches/{id}/results
//
// They check the key (401) and, for Anthropic, anthropic-version (400), as
// the synchronous endpoints do; RPM, TPM and Faults do not apply, as the
// real batch limits are separate. A batch ends BatchAPIConfig.Processing
// after it was created, at the first look after that (a poll, a results
// read): then every item is answered at once by the same code the
// synchronous endpoints answer with (Config.Answer, usage, max_tokens),
// except the items BatchAPIConfig picks to come back errored or expired. A
// canceled batch ends at the next look with every item canceled; canceling
// an ended batch is a 400. An item whose body the synchronous endpoint
// would refuse comes back errored with that 400's body; an OpenAI batch
// takes "endpoint" "/v1/chat/completions" or "/v1/responses", its lines
// answered as that endpoint answers; an OpenAI input
// file with a bad line (not JSON, a repeated custom_id, another url) makes
// a failed batch whose errors name the lines, as OpenAI's does. Items are
// not recorded in Requests; Stats counts batches and items answered, each
// item once however often its results are read. OpenAI's metadata is
// kept and echoed (at most 16 pairs, keys of 64 and values of 512
// characters, or a 400). The lists answer a format's batches newest
// first, limit (default 20, at most 100 for OpenAI and 1000 for
// Anthropic) at a time after the cursor (after, after_id), in the real
// list objects; a list is a look, ending the batches due.
// BatchAPIConfig.LoseCreate makes a creation answer 500 although the
// batch was made, as an answer lost on the way back.
package fakeprovider

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// The wire formats, as Received.Format names them.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// Paths the fake serves.
const (
	OpenAIPath    = "/v1/chat/completions"
	AnthropicPath = "/v1/messages"
)

// Limiter selects how RPM and TPM are enforced.
type Limiter int

const (
	// SlidingWindow: no interval of length Window admits more than RPM
	// requests or TPM tokens.
	SlidingWindow Limiter = iota
	// TokenBucket: buckets of capacity RPM and TPM, starting full,
	// refilling continuously at RPM and TPM per Window.
	TokenBucket
)

func (l Limiter) String() string {
	switch l {
	case SlidingWindow:
		return "sliding window"
	case TokenBucket:
		return "token bucket"
	}
	return fmt.Sprintf("limiter(%d)", int(l))
}

// Config shapes a fake server. The zero value is an unlimited, fault-free
// server that accepts any key.
type Config struct {
	// Window is the period RPM and TPM count over: a minute unless set;
	// tests scale it down (100ms to 1s).
	Window time.Duration
	// RPM and TPM are the requests and tokens allowed per Window; 0 leaves
	// that dimension unlimited.
	RPM, TPM int
	// Limiter is SlidingWindow (the default) or TokenBucket.
	Limiter Limiter
	// SendLimitHeaders adds the provider's rate-limit headers to every
	// response to a request that reached the limiter.
	SendLimitHeaders bool
	// RetryAfter adds retry-after (and for OpenAI retry-after-ms) to 429s:
	// the time until the request would be admitted.
	RetryAfter bool
	// Faults injects failures into admitted requests.
	Faults FaultConfig
	// Latency is the fixed service time of each admitted request that is
	// answered (faults included, hangs excepted).
	Latency time.Duration
	// APIKey, when set, is the only key accepted; any other (or none) gets
	// 401. When empty, any key or none is accepted, like a local server.
	APIKey string
	// Answer writes the assistant's text; nil uses the default (see the
	// package doc). It is called concurrently.
	Answer func(req Received) string
	// ShuffleBatch reorders an answer that is a JSON array of commit
	// answers; DropOne leaves out its last commit when it has two or more.
	ShuffleBatch, DropOne bool
	// Sloppy garbles one in Sloppy of the answers to commit prompts asked
	// for without a JSON schema (1-based, by request number): prose around
	// a JSON array cut short, as models that are not held to a schema
	// sometimes write. An answer under a schema is never garbled, as the
	// real APIs' strict modes guarantee. 0 garbles none.
	Sloppy int
	// CountTokens counts a text's tokens for TPM and usage; nil counts
	// ceil(runes/4). It is called concurrently.
	CountTokens func(text string) int
	// BatchAPI shapes the batch endpoints (see Batch APIs above).
	BatchAPI BatchAPIConfig

	// clock replaces time.Now for the limiter and the stats (in-package
	// tests only).
	clock func() time.Time
}

// FaultConfig gives the probability (0..1) that an admitted request fails
// in each way; their sum must not exceed 1.
type FaultConfig struct {
	Status500 float64
	// Status5xx is an overloaded answer: 529 overloaded_error from
	// Anthropic, 503 from OpenAI.
	Status5xx float64
	// Malformed200 is a 200 whose JSON body is truncated.
	Malformed200 float64
	// Hang holds the request without answering until the client gives up
	// or the server closes.
	Hang float64
	// Seed seeds the draws.
	Seed uint64
}

func (f FaultConfig) sum() float64 { return f.Status500 + f.Status5xx + f.Malformed200 + f.Hang }

// Received is a request as the fake understood it.
type Received struct {
	Format string // OpenAI or Anthropic
	Path   string
	At     time.Time // arrival, by the server's clock
	Model  string
	// System is Anthropic's system parameter, or OpenAI's system and
	// developer messages joined by blank lines; Messages holds the rest.
	System      string
	Messages    []provider.Message
	MaxTokens   int      // max_tokens (OpenAI: max_completion_tokens, else max_tokens); 0 when absent
	Temperature *float64 // nil when absent
	Header      http.Header
	Body        []byte
	// Status is what the server answered (0 while it is being handled; a
	// hung request stays 0). Answer functions always see 0.
	Status int
}

// Server is a running fake.
type Server struct {
	cfg   Config
	ts    *httptest.Server
	now   func() time.Time
	count func(string) int

	done      chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	start    time.Time
	seq      int
	limiter  limiter
	faults   *rand.Rand
	shuffles *rand.Rand
	stats    Stats
	received []*Received

	batchMux *http.ServeMux
	batches  batchState

	cache promptCache // the prompts answered, for cached usage
}

// Start runs a fake server for the life of the test.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// URL is the server's root, http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.ts.URL }

// OpenAIBaseURL is the base an OpenAI client is configured with: URL+"/v1".
func (s *Server) OpenAIBaseURL() string { return s.ts.URL + "/v1" }

// AnthropicBaseURL is the base an Anthropic client is configured with: URL.
func (s *Server) AnthropicBaseURL() string { return s.ts.URL }

// Client is an http.Client for the server, closed with it.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Close ends held requests and shuts the server down; it is idempotent and
// also runs at the end of the test.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ts.Close()
	})
}

// Estimate is the tokens the server charges TPM for req: its MaxTokens plus
// its prompt's tokens.
func (s *Server) Estimate(req provider.Request) int {
	return req.MaxTokens + s.promptTokens(req.System, req.Messages)
}

func (s *Server) promptTokens(system string, msgs []provider.Message) int {
	var b bytes.Buffer
	b.WriteString(system)
	for _, m := range msgs {
		b.WriteString(m.Content)
	}
	return s.count(b.String())
}

// Requests is every POST to a served path whose body could be read, in
// arrival order, including those refused (401, 400, 429).
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Received, len(s.received))
	for i, r := range s.received {
		out[i] = *r
		out[i].Messages = slices.Clone(r.Messages)
		out[i].Header = r.Header.Clone()
		out[i].Body = slices.Clone(r.Body)
	}
	return out
}

// Stats is a snapshot of what the server has done.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Admitted = slices.Clone(s.stats.Admitted)
	st.RateLimitedAt = slices.Clone(s.stats.RateLimitedAt)
	st.Windows = slices.Clone(s.stats.Windows)
	st.MaxRequestsInWindow, st.MaxTokensInWindow = st.MaxInWindow(time.Time{})
	return st
}

// serveHTTP routes, authenticates, validates, limits, injects the fault
// and answers.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.stats.Requests++
	s.seq++
	id := s.seq
	s.mu.Unlock()

	if _, pattern := s.batchMux.Handler(r); pattern != "" {
		s.batchMux.ServeHTTP(w, r)
		return
	}
	var format string
	switch r.URL.Path {
	case OpenAIPath, ResponsesPath:
		format = OpenAI
	case AnthropicPath:
		format = Anthropic
	default:
		format = guessFormat(r.Header)
		s.finish(nil, http.StatusNotFound, func(st *Stats) { st.NotFound++ })
		setRequestID(w, format, id)
		if format == OpenAI {
			writeError(w, format, http.StatusNotFound, apiError{Type: "invalid_request_error", Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)}, id)
		} else {
			writeError(w, format, http.StatusNotFound, apiError{Type: "not_found_error", Message: "Not Found"}, id)
		}
		return
	}
	setRequestID(w, format, id)
	if r.Method != http.MethodPost {
		s.finish(nil, http.StatusMethodNotAllowed, func(st *Stats) { st.BadRequest++ })
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, format, http.StatusMethodNotAllowed, apiError{Type: "invalid_request_error", Message: fmt.Sprintf("Method Not Allowed (%s %s)", r.Method, r.URL.Path)}, id)
		return
	}

	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The client went away while sending.
		s.finish(nil, 0, func(st *Stats) { st.Canceled++ })
		return
	}
	rec := &Received{Format: format, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	rec.At = s.now()
	s.received = append(s.received, rec)
	s.mu.Unlock()

	if e, ok := s.checkKey(format, r.Header); !ok {
		s.finish(rec, http.StatusUnauthorized, func(st *Stats) { st.Unauthorized++ })
		writeError(w, format, http.StatusUnauthorized, e, id)
		return
	}
	if format == Anthropic && r.Header.Get("anthropic-version") == "" {
		s.finish(rec, http.StatusBadRequest, func(st *Stats) { st.BadRequest++ })
		writeError(w, format, http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: "anthropic-version: header is required"}, id)
		return
	}
	if s.refuseResponsesOnly(w, rec, r.URL.Path, body, id) {
		return
	}
	var parsed request
	var perr *apiError
	if format == OpenAI {
		parsed, perr = parseAt(r.URL.Path, body)
	} else {
		parsed, perr = parseAnthropic(body)
	}
	if perr != nil {
		s.finish(rec, http.StatusBadRequest, func(st *Stats) { st.BadRequest++ })
		writeError(w, format, http.StatusBadRequest, *perr, id)
		return
	}
	s.mu.Lock()
	rec.Model, rec.System, rec.Messages = parsed.model, parsed.system, parsed.messages
	rec.MaxTokens, rec.Temperature = parsed.maxTokens, parsed.temperature
	s.mu.Unlock()

	promptTokens := s.promptTokens(parsed.system, parsed.messages)
	estimate := parsed.maxTokens + promptTokens

	// Admission, its limit state and its fault draw happen at one instant.
	s.mu.Lock()
	now := s.now()
	v := s.limiter.admit(now, estimate)
	state := s.limiter.state(now)
	win := s.window(now)
	var draw float64
	if v.ok {
		draw = s.faults.Float64()
		s.stats.Admitted = append(s.stats.Admitted, Admission{At: now, Tokens: estimate, Format: format})
		win.Requests++
		win.Tokens += estimate
	} else {
		s.stats.RateLimited++
		s.stats.RateLimitedAt = append(s.stats.RateLimitedAt, now)
		win.RateLimited++
		if v.tooLarge {
			s.stats.TooLarge++
		}
	}
	s.mu.Unlock()

	if s.cfg.SendLimitHeaders {
		setLimitHeaders(w.Header(), format, state, now)
	}
	if !v.ok {
		s.finish(rec, http.StatusTooManyRequests, nil)
		if s.cfg.RetryAfter && !v.tooLarge {
			setRetryAfter(w.Header(), format, v.wait)
		}
		writeError(w, format, http.StatusTooManyRequests, rateLimitError(format, parsed.model, v, estimate), id)
		return
	}

	f := s.cfg.Faults
	switch {
	case draw < f.Status500:
		if !s.serve(w, r, rec, http.StatusInternalServerError, func(st *Stats) { st.ServerErrors++ }) {
			return
		}
		if format == OpenAI {
			writeError(w, format, http.StatusInternalServerError, apiError{Type: "server_error", Message: "The server had an error while processing your request. Sorry about that!"}, id)
		} else {
			writeError(w, format, http.StatusInternalServerError, apiError{Type: "api_error", Message: "Internal server error"}, id)
		}
		return
	case draw < f.Status500+f.Status5xx:
		if format == OpenAI {
			if !s.serve(w, r, rec, http.StatusServiceUnavailable, func(st *Stats) { st.ServerErrors++ }) {
				return
			}
			writeError(w, format, http.StatusServiceUnavailable, apiError{Type: "server_error", Message: "The engine is currently overloaded, please try again later."}, id)
		} else {
			if !s.serve(w, r, rec, 529, func(st *Stats) { st.ServerErrors++ }) {
				return
			}
			writeError(w, format, 529, apiError{Type: "overloaded_error", Message: "Overloaded"}, id)
		}
		return
	case draw < f.Status500+f.Status5xx+f.Malformed200:
		if !s.serve(w, r, rec, http.StatusOK, func(st *Stats) { st.Malformed++ }) {
			return
		}
		full := s.answerAt(r.URL.Path, format, parsed, *rec, promptTokens, id)
		writeRaw(w, http.StatusOK, full[:len(full)/2])
		return
	case draw < f.sum():
		s.mu.Lock()
		s.stats.Hung++
		s.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-s.done:
			panic(http.ErrAbortHandler) // drop the connection, answer nothing
		}
		return
	}
	if !s.serve(w, r, rec, http.StatusOK, func(st *Stats) { st.Succeeded++ }) {
		return
	}
	writeRaw(w, http.StatusOK, s.answerAt(r.URL.Path, format, parsed, *rec, promptTokens, id))
}

// serve waits out Latency and records the outcome; it reports false when
// the client went away first (the caller then writes nothing) and aborts
// the handler when the server closes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, rec *Received, status int, count func(*Stats)) bool {
	if d := s.cfg.Latency; d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			s.finish(rec, 0, func(st *Stats) { st.Canceled++ })
			return false
		case <-s.done:
			s.finish(rec, 0, func(st *Stats) { st.Canceled++ })
			panic(http.ErrAbortHandler)
		}
	}
	s.finish(rec, status, count)
	return true
}

// finish records a request's answer.
func (s *Server) finish(rec *Received, status int, count func(*Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec != nil {
		rec.Status = status
	}
	if count != nil {
		count(&s.stats)
	}
}

// window is the fixed window holding now, growing the list as needed;
// s.mu must be held.
func (s *Server) window(now time.Time) *WindowCount {
	i := 0
	if d := now.Sub(s.start); d > 0 {
		i = int(d / s.cfg.Window)
	}
	for len(s.stats.Windows) <= i {
		n := len(s.stats.Windows)
		s.stats.Windows = append(s.stats.Windows, WindowCount{Start: s.start.Add(time.Duration(n) * s.cfg.Window)})
	}
	return &s.stats.Windows[i]
}

func (s *Server) checkKey(format string, h http.Header) (apiError, bool) {
	want := s.cfg.APIKey
	if want == "" {
		return apiError{}, true
	}
	if format == OpenAI {
		auth := h.Get("Authorization")
		key, ok := cutPrefixFold(auth, "Bearer ")
		switch {
		case !ok || key == "":
			return apiError{Type: "invalid_request_error", Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."}, false
		case key != want:
			return apiError{Type: "invalid_request_error", Code: "invalid_api_key", Message: fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", maskKey(key))}, false
		}
		return apiError{}, true
	}
	switch key := h.Get("x-api-key"); {
	case key == "":
		return apiError{Type: "authentication_error", Message: "x-api-key header is required"}, false
	case key != want:
		return apiError{Type: "authentication_error", Message: "invalid x-api-key"}, false
	}
	return apiError{}, true
}
