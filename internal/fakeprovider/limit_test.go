package fakeprovider

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// A burst of RPM+k requests, sequential or concurrent, on the real clock:
// exactly RPM get through within one window, the rest get 429 with
// retry-after, and waiting that long frees a slot.
func TestRPMSlidingWindowBurst(t *testing.T) {
	const rpm, extra = 5, 4
	for _, format := range []string{OpenAI, Anthropic} {
		for _, concurrent := range []bool{false, true} {
			name := format + "/sequential"
			if concurrent {
				name = format + "/concurrent"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each waits out a retry-after
				window := time.Second
				srv := Start(t, Config{Window: window, RPM: rpm, RetryAfter: true, SendLimitHeaders: true})
				replies := make([]reply, rpm+extra)
				start := time.Now()
				var wg sync.WaitGroup
				for i := range replies {
					if !concurrent {
						replies[i] = send(t, srv, format, "k", simple("hi", 10))
						continue
					}
					wg.Go(func() {
						r, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+path(format), headers(format, "k"), encode(t, format, simple("hi", 10)))
						if err != nil {
							t.Error(err)
						}
						replies[i] = r
					})
				}
				wg.Wait()
				elapsed := time.Since(start)

				ok, limited := 0, 0
				var lastWait time.Duration
				for _, r := range replies {
					switch r.status {
					case http.StatusOK:
						ok++
					case http.StatusTooManyRequests:
						limited++
						lastWait = checkRateLimited(t, format, r, "requests", window)
					default:
						t.Fatalf("status %d: %s", r.status, r.body)
					}
				}
				st := srv.Stats()
				if st.MaxRequestsInWindow > rpm {
					t.Errorf("admitted %d requests in one window, limit %d", st.MaxRequestsInWindow, rpm)
				}
				if elapsed < window {
					if ok != rpm || limited != extra {
						t.Errorf("%d OK and %d 429 in %v, want %d and %d", ok, limited, elapsed, rpm, extra)
					}
				} else {
					t.Logf("the burst took %v, longer than the window: only checking the limit", elapsed)
				}
				if st.Succeeded != ok || st.RateLimited != limited || st.Requests != rpm+extra || len(st.Admitted) != ok {
					t.Errorf("stats %+v disagree with %d OK, %d 429", st, ok, limited)
				}

				// Waiting as told frees a slot.
				time.Sleep(lastWait + 5*time.Millisecond)
				if r := send(t, srv, format, "k", simple("again", 10)); r.status != http.StatusOK {
					t.Errorf("after waiting %v as told: status %d: %s", lastWait, r.status, r.body)
				}
			})
		}
	}
}

// checkRateLimited checks a 429's body and retry headers and returns the
// wait it asked for.
func checkRateLimited(t *testing.T, format string, r reply, dim string, window time.Duration) time.Duration {
	t.Helper()
	e := decodeError(t, format, r)
	if format == OpenAI {
		if e.typ != dim || e.code != "rate_limit_exceeded" || !strings.Contains(e.message, "Please try again in") {
			t.Errorf("OpenAI 429 %+v, want type %q, code rate_limit_exceeded", e, dim)
		}
	} else if e.typ != "rate_limit_error" || !strings.Contains(e.message, dim+" per minute") {
		t.Errorf("Anthropic 429 %+v, want rate_limit_error on %s", e, dim)
	}
	secs, err := strconv.Atoi(r.header.Get("retry-after"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > window+time.Second {
		t.Errorf("retry-after %q", r.header.Get("retry-after"))
	}
	wait := time.Duration(secs) * time.Second
	if format == OpenAI {
		ms, err := strconv.Atoi(r.header.Get("retry-after-ms"))
		if err != nil || ms < 1 || time.Duration(ms)*time.Millisecond > window {
			t.Errorf("retry-after-ms %q", r.header.Get("retry-after-ms"))
		}
		if time.Duration(ms)*time.Millisecond > wait {
			t.Errorf("retry-after %ds is shorter than retry-after-ms %d", secs, ms)
		}
		wait = time.Duration(ms) * time.Millisecond
	} else if h := r.header.Get("retry-after-ms"); h != "" {
		t.Errorf("Anthropic sends no retry-after-ms, got %q", h)
	}
	return wait
}

// On a manual clock the sliding window's decisions, waits and headers are
// exact.
func TestSlidingWindowExact(t *testing.T) {
	clk := newClock()
	t0 := clk.Now()
	srv := Start(t, Config{Window: time.Second, RPM: 3, RetryAfter: true, SendLimitHeaders: true, clock: clk.Now})
	ms := time.Millisecond
	steps := []struct {
		at        time.Duration
		format    string
		status    int
		remaining int
		reset     time.Duration // from the step's time
		wait      time.Duration // retry-after-ms of a 429
	}{
		{0, OpenAI, 200, 2, time.Second, 0},
		{100 * ms, Anthropic, 200, 1, time.Second, 0},
		{200 * ms, OpenAI, 200, 0, time.Second, 0},
		{300 * ms, OpenAI, 429, 0, 900 * ms, 700 * ms},
		{999 * ms, OpenAI, 429, 0, 201 * ms, 1 * ms},
		{1000 * ms, Anthropic, 200, 0, time.Second, 0}, // the first left the window
		{1050 * ms, OpenAI, 429, 0, 950 * ms, 50 * ms},
		{2500 * ms, OpenAI, 200, 2, time.Second, 0}, // all gone
	}
	for i, s := range steps {
		clk.Set(t0, s.at)
		r := send(t, srv, s.format, "k", simple("hi", 5))
		if r.status != s.status {
			t.Fatalf("step %d at %v: status %d, want %d: %s", i, s.at, r.status, s.status, r.body)
		}
		now := clk.Now()
		if s.format == OpenAI {
			want := map[string]string{
				"x-ratelimit-limit-requests":     "3",
				"x-ratelimit-remaining-requests": strconv.Itoa(s.remaining),
				"x-ratelimit-reset-requests":     s.reset.String(),
			}
			for k, v := range want {
				if got := r.header.Get(k); got != v {
					t.Errorf("step %d: %s = %q, want %q", i, k, got, v)
				}
			}
			if got := r.header.Get("x-ratelimit-limit-tokens"); got != "" {
				t.Errorf("step %d: unlimited tokens, yet x-ratelimit-limit-tokens = %q", i, got)
			}
		} else {
			want := map[string]string{
				"anthropic-ratelimit-requests-limit":     "3",
				"anthropic-ratelimit-requests-remaining": strconv.Itoa(s.remaining),
				"anthropic-ratelimit-requests-reset":     FormatReset(now.Add(s.reset)),
			}
			for k, v := range want {
				if got := r.header.Get(k); got != v {
					t.Errorf("step %d: %s = %q, want %q", i, k, got, v)
				}
			}
		}
		if s.status == 429 {
			if got := r.header.Get("retry-after-ms"); got != strconv.Itoa(int(s.wait/ms)) {
				t.Errorf("step %d: retry-after-ms %q, want %d", i, got, s.wait/ms)
			}
			if got := r.header.Get("retry-after"); got != "1" {
				t.Errorf("step %d: retry-after %q, want 1", i, got)
			}
		}
	}
	st := srv.Stats()
	if st.MaxRequestsInWindow != 3 || len(st.Admitted) != 5 || st.RateLimited != 3 {
		t.Errorf("stats: max %d in a window, %d admitted, %d 429; want 3, 5, 3", st.MaxRequestsInWindow, len(st.Admitted), st.RateLimited)
	}
	wantWindows := []WindowCount{
		{Start: t0, Requests: 3, Tokens: 3 * srv.Estimate(simple("hi", 5)), RateLimited: 2},
		{Start: t0.Add(time.Second), Requests: 1, Tokens: srv.Estimate(simple("hi", 5)), RateLimited: 1},
		{Start: t0.Add(2 * time.Second), Requests: 1, Tokens: srv.Estimate(simple("hi", 5))},
	}
	if len(st.Windows) != len(wantWindows) {
		t.Fatalf("windows %+v", st.Windows)
	}
	for i := range wantWindows {
		if !st.Windows[i].Start.Equal(wantWindows[i].Start) || st.Windows[i].Requests != wantWindows[i].Requests ||
			st.Windows[i].Tokens != wantWindows[i].Tokens || st.Windows[i].RateLimited != wantWindows[i].RateLimited {
			t.Errorf("window %d = %+v, want %+v", i, st.Windows[i], wantWindows[i])
		}
	}
	if n := st.RateLimitedSince(t0.Add(time.Second)); n != 1 {
		t.Errorf("RateLimitedSince(1s) = %d, want 1", n)
	}
	if req, _ := st.MaxInWindow(t0.Add(time.Second)); req != 1 {
		t.Errorf("MaxInWindow(from 1s) = %d, want 1", req)
	}
}

// The token bucket starts full, refills continuously, and its headers say
// when it is full again.
func TestTokenBucketExact(t *testing.T) {
	clk := newClock()
	t0 := clk.Now()
	srv := Start(t, Config{Window: time.Second, RPM: 4, Limiter: TokenBucket, RetryAfter: true, SendLimitHeaders: true, clock: clk.Now})
	ms := time.Millisecond
	steps := []struct {
		at        time.Duration
		status    int
		remaining int
		reset     string
		wait      string
	}{
		{0, 200, 3, "250ms", ""},
		{0, 200, 2, "500ms", ""},
		{0, 200, 1, "750ms", ""},
		{0, 200, 0, "1s", ""},
		{0, 429, 0, "1s", "250"},
		{100 * ms, 429, 0, "900ms", "150"},
		{250 * ms, 200, 0, "1s", ""},
		{500 * ms, 200, 0, "1s", ""},
		{1500 * ms, 200, 3, "250ms", ""}, // full again at 1.5s
	}
	for i, s := range steps {
		clk.Set(t0, s.at)
		r := send(t, srv, OpenAI, "k", simple("hi", 5))
		if r.status != s.status {
			t.Fatalf("step %d at %v: status %d, want %d: %s", i, s.at, r.status, s.status, r.body)
		}
		if got := r.header.Get("x-ratelimit-remaining-requests"); got != strconv.Itoa(s.remaining) {
			t.Errorf("step %d: remaining %q, want %d", i, got, s.remaining)
		}
		if got := r.header.Get("x-ratelimit-reset-requests"); got != s.reset {
			t.Errorf("step %d: reset %q, want %q", i, got, s.reset)
		}
		if got := r.header.Get("retry-after-ms"); got != s.wait {
			t.Errorf("step %d: retry-after-ms %q, want %q", i, got, s.wait)
		}
	}
	// A bucket lets a full burst and the refill through in one window.
	if st := srv.Stats(); st.MaxRequestsInWindow != 6 {
		t.Errorf("MaxRequestsInWindow = %d, want 6 (4 at once, 2 refilled)", st.MaxRequestsInWindow)
	}
}

// TPM counts max_tokens plus ceil(prompt characters / 4) per request, in
// both limiters, and refuses outright a request larger than TPM.
func TestTPM(t *testing.T) {
	for _, lim := range []Limiter{SlidingWindow, TokenBucket} {
		for _, format := range []string{OpenAI, Anthropic} {
			t.Run(lim.String()+"/"+format, func(t *testing.T) {
				clk := newClock()
				t0 := clk.Now()
				srv := Start(t, Config{Window: time.Second, TPM: 500, Limiter: lim, RetryAfter: true, SendLimitHeaders: true, clock: clk.Now})
				req := simple(strings.Repeat("x", 397), 100) // ceil(397/4) = 100 prompt tokens
				if got := srv.Estimate(req); got != 200 {
					t.Fatalf("Estimate = %d, want 200", got)
				}
				remaining := func(r reply) string {
					if format == OpenAI {
						return r.header.Get("x-ratelimit-remaining-tokens")
					}
					return r.header.Get("anthropic-ratelimit-tokens-remaining")
				}

				r := send(t, srv, format, "k", req)
				a := decodeAnswer(t, format, r)
				if a.input != 100 || a.output != quarterRunes(a.text) || a.output < 1 {
					t.Errorf("usage %d in, %d out for %q; want 100 in, ceil(len/4) out", a.input, a.output, a.text)
				}
				if got := remaining(r); got != "300" {
					t.Errorf("remaining tokens %q, want 300", got)
				}
				clk.Set(t0, 50*time.Millisecond)
				r = send(t, srv, format, "k", req)
				if r.status != 200 {
					t.Fatalf("second request: %d %s", r.status, r.body)
				}
				if lim == SlidingWindow && remaining(r) != "100" {
					t.Errorf("remaining tokens %q, want 100", remaining(r))
				}
				clk.Set(t0, 100*time.Millisecond)
				r = send(t, srv, format, "k", req)
				if r.status != http.StatusTooManyRequests {
					t.Fatalf("third request: %d %s", r.status, r.body)
				}
				checkRateLimited(t, format, r, "tokens", time.Second)
				if lim == SlidingWindow && format == OpenAI && r.header.Get("retry-after-ms") != "900" {
					// 100 tokens too many: the first admission must leave, at 1s.
					t.Errorf("retry-after-ms %q, want 900", r.header.Get("retry-after-ms"))
				}

				// Larger than the limit: never admissible, so no retry-after.
				r = send(t, srv, format, "k", simple("x", 600))
				if r.status != http.StatusTooManyRequests || r.header.Get("retry-after") != "" {
					t.Fatalf("too large: status %d, retry-after %q: %s", r.status, r.header.Get("retry-after"), r.body)
				}
				e := decodeError(t, format, r)
				if format == OpenAI && (e.typ != "tokens" || e.code != "rate_limit_exceeded" || !strings.Contains(e.message, "Request too large")) {
					t.Errorf("too large: %+v", e)
				}
				if format == Anthropic && e.typ != "rate_limit_error" {
					t.Errorf("too large: %+v", e)
				}
				st := srv.Stats()
				if st.RateLimited != 2 || st.TooLarge != 1 || st.MaxTokensInWindow != 400 {
					t.Errorf("stats: %d 429, %d too large, max %d tokens in a window; want 2, 1, 400", st.RateLimited, st.TooLarge, st.MaxTokensInWindow)
				}
			})
		}
	}
}

// The headers of both formats are present on every answer past the key
// check and consistent: limits fixed, remaining falling, resets in the
// future and no later than a window away.
func TestLimitHeadersConsistent(t *testing.T) {
	const window = 500 * time.Millisecond
	for _, format := range []string{OpenAI, Anthropic} {
		t.Run(format, func(t *testing.T) {
			srv := Start(t, Config{Window: window, RPM: 4, TPM: 10_000, SendLimitHeaders: true, RetryAfter: true})
			prevReq, prevTok := 4, 10_000
			for i := range 5 {
				before := time.Now()
				r := send(t, srv, format, "k", simple("hello there", 50))
				lim := readLimits(t, format, r.header, before)
				if lim.RequestsLimit != 4 || lim.TokensLimit != 10_000 {
					t.Fatalf("request %d: limits %+v", i, lim)
				}
				if slack := window + 50*time.Millisecond; lim.RequestsReset <= 0 || lim.RequestsReset > slack || lim.TokensReset <= 0 || lim.TokensReset > slack {
					t.Errorf("request %d: resets %v, %v outside (0, %v] (50ms slack: Anthropic's is a wall-clock time)", i, lim.RequestsReset, lim.TokensReset, window)
				}
				switch r.status {
				case http.StatusOK:
					if lim.RequestsRemaining != prevReq-1 || lim.TokensRemaining >= prevTok {
						t.Errorf("request %d: remaining %d requests, %d tokens after %d, %d", i, lim.RequestsRemaining, lim.TokensRemaining, prevReq, prevTok)
					}
				case http.StatusTooManyRequests: // the fifth, unless the window already moved
					if lim.RequestsRemaining != 0 {
						t.Errorf("429 with %d requests remaining", lim.RequestsRemaining)
					}
				default:
					t.Fatalf("status %d", r.status)
				}
				prevReq, prevTok = lim.RequestsRemaining, lim.TokensRemaining
			}
		})
	}
}

// readLimits parses the rate-limit headers as a client would.
func readLimits(t *testing.T, format string, h http.Header, sent time.Time) provider.Limits {
	t.Helper()
	atoi := func(k string) int {
		n, err := strconv.Atoi(h.Get(k))
		if err != nil {
			t.Fatalf("%s: %q", k, h.Get(k))
		}
		return n
	}
	l := provider.NoLimits()
	if format == OpenAI {
		dur := func(k string) time.Duration {
			d, err := time.ParseDuration(h.Get(k))
			if err != nil {
				t.Fatalf("%s: %q", k, h.Get(k))
			}
			return d
		}
		l.RequestsLimit, l.RequestsRemaining, l.RequestsReset = atoi("x-ratelimit-limit-requests"), atoi("x-ratelimit-remaining-requests"), dur("x-ratelimit-reset-requests")
		l.TokensLimit, l.TokensRemaining, l.TokensReset = atoi("x-ratelimit-limit-tokens"), atoi("x-ratelimit-remaining-tokens"), dur("x-ratelimit-reset-tokens")
		return l
	}
	at := func(k string) time.Duration {
		ts, err := time.Parse(time.RFC3339, h.Get(k))
		if err != nil {
			t.Fatalf("%s: %q", k, h.Get(k))
		}
		// Measured from when the request was sent: an upper bound.
		return ts.Sub(sent)
	}
	l.RequestsLimit, l.RequestsRemaining, l.RequestsReset = atoi("anthropic-ratelimit-requests-limit"), atoi("anthropic-ratelimit-requests-remaining"), at("anthropic-ratelimit-requests-reset")
	l.TokensLimit, l.TokensRemaining, l.TokensReset = atoi("anthropic-ratelimit-tokens-limit"), atoi("anthropic-ratelimit-tokens-remaining"), at("anthropic-ratelimit-tokens-reset")
	return l
}

// Without SendLimitHeaders or RetryAfter, no such headers.
func TestNoLimitHeaders(t *testing.T) {
	srv := Start(t, Config{Window: time.Second, RPM: 1})
	for _, format := range []string{OpenAI, Anthropic} {
		r := send(t, srv, format, "k", simple("hi", 5))
		for k := range r.header {
			k = strings.ToLower(k)
			if strings.Contains(k, "ratelimit") || strings.HasPrefix(k, "retry-after") {
				t.Errorf("%s %d: header %s", format, r.status, k)
			}
		}
	}
}

// Many concurrent clients of both formats: every request accounted for,
// never more than the limit in any window.
func TestConcurrentClients(t *testing.T) {
	srv := Start(t, Config{Window: 300 * time.Millisecond, RPM: 10, TPM: 100_000, Latency: 5 * time.Millisecond, SendLimitHeaders: true, RetryAfter: true})
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			format := OpenAI
			if i%2 == 1 {
				format = Anthropic
			}
			r, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+path(format), headers(format, "k"), encode(t, format, simple("hi", 20)))
			if err != nil {
				t.Error(err)
				return
			}
			if r.status != 200 && r.status != 429 {
				t.Errorf("status %d: %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	st := srv.Stats()
	if st.Requests != 60 || st.Succeeded+st.RateLimited != 60 {
		t.Errorf("stats %+v: not every request accounted for", st)
	}
	if st.Succeeded < 10 || st.MaxRequestsInWindow > 10 {
		t.Errorf("%d succeeded, at most %d in a window; want >= 10 and <= 10", st.Succeeded, st.MaxRequestsInWindow)
	}
	if got := len(srv.Requests()); got != 60 {
		t.Errorf("%d requests recorded", got)
	}
}
