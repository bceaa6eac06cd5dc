package fakeprovider

import (
	"math/bits"
	"net/http"
	"strconv"
	"time"
)

// limiter decides admissions; the server's mutex guards it.
type limiter interface {
	// admit decides on a request of tokens arriving at now and charges it
	// when admitted.
	admit(now time.Time, tokens int) verdict
	// state is the limit state at now, for the headers.
	state(now time.Time) limitState
}

// verdict is an admission decision.
type verdict struct {
	ok bool
	// For a refusal: the dimension that refused ("requests" or "tokens"),
	// its limit, what it has used, and the wait until the request would be
	// admitted in every dimension (0 when it never can: tooLarge).
	dim         string
	limit, used int
	wait        time.Duration
	tooLarge    bool
}

// limitState is what the rate-limit headers report; a 0 limit is an
// unlimited dimension and sends no headers.
type limitState struct {
	reqLimit, reqRemaining int
	reqReset               time.Duration
	tokLimit, tokRemaining int
	tokReset               time.Duration
}

// refuse merges a dimension's refusal into v, keeping the longer wait.
func (v *verdict) refuse(dim string, limit, used int, wait time.Duration) {
	if v.dim == "" || wait > v.wait {
		*v = verdict{dim: dim, limit: limit, used: used, wait: wait}
	}
}

// slidingWindow admits while the last window's admissions stay within the
// limits.
type slidingWindow struct {
	window   time.Duration
	rpm, tpm int
	log      []Admission // admitted within the last window, oldest first
	tokens   int         // sum over log
}

func newSlidingWindow(window time.Duration, rpm, tpm int) *slidingWindow {
	return &slidingWindow{window: window, rpm: rpm, tpm: tpm}
}

// prune forgets admissions that left the window: an admission at t counts
// in (t, t+window) and is gone at t+window.
func (l *slidingWindow) prune(now time.Time) {
	cut := now.Add(-l.window)
	i := 0
	for i < len(l.log) && !l.log[i].At.After(cut) {
		l.tokens -= l.log[i].Tokens
		i++
	}
	if i > 0 {
		l.log = append(l.log[:0], l.log[i:]...)
	}
}

func (l *slidingWindow) admit(now time.Time, tokens int) verdict {
	l.prune(now)
	if l.tpm > 0 && tokens > l.tpm {
		return verdict{dim: "tokens", limit: l.tpm, used: l.tokens, tooLarge: true}
	}
	var v verdict
	if l.rpm > 0 && len(l.log) >= l.rpm {
		// The admissions up to log[len-rpm] must leave for one slot to free.
		i := len(l.log) - l.rpm
		v.refuse("requests", l.rpm, len(l.log), l.log[i].At.Add(l.window).Sub(now))
	}
	if l.tpm > 0 && l.tokens+tokens > l.tpm {
		excess, i := l.tokens+tokens-l.tpm, 0
		for excess > 0 { // ends: excess <= l.tokens since tokens <= tpm
			excess -= l.log[i].Tokens
			i++
		}
		v.refuse("tokens", l.tpm, l.tokens, l.log[i-1].At.Add(l.window).Sub(now))
	}
	if v.dim != "" {
		return v
	}
	l.log = append(l.log, Admission{At: now, Tokens: tokens})
	l.tokens += tokens
	return verdict{ok: true}
}

func (l *slidingWindow) state(now time.Time) limitState {
	l.prune(now)
	st := limitState{reqLimit: l.rpm, tokLimit: l.tpm}
	if l.rpm > 0 {
		st.reqRemaining = max(0, l.rpm-len(l.log))
		if n := len(l.log); n > 0 {
			st.reqReset = l.log[n-1].At.Add(l.window).Sub(now)
		}
	}
	if l.tpm > 0 {
		st.tokRemaining = max(0, l.tpm-l.tokens)
		for i := len(l.log) - 1; i >= 0; i-- {
			if l.log[i].Tokens > 0 {
				st.tokReset = l.log[i].At.Add(l.window).Sub(now)
				break
			}
		}
	}
	return st
}

// bucket holds a request bucket and a token bucket.
type bucket struct {
	req, tok *gcra // nil when unlimited
}

func newBucket(window time.Duration, rpm, tpm int) *bucket {
	b := &bucket{}
	if rpm > 0 {
		b.req = &gcra{window: window, capacity: rpm}
	}
	if tpm > 0 {
		b.tok = &gcra{window: window, capacity: tpm}
	}
	return b
}

func (b *bucket) admit(now time.Time, tokens int) verdict {
	if b.tok != nil && tokens > b.tok.capacity {
		return verdict{dim: "tokens", limit: b.tok.capacity, used: b.tok.used(now), tooLarge: true}
	}
	var v verdict
	var reqTAT, tokTAT time.Time
	if b.req != nil {
		var wait time.Duration
		if reqTAT, wait = b.req.check(now, 1); wait > 0 {
			v.refuse("requests", b.req.capacity, b.req.used(now), wait)
		}
	}
	if b.tok != nil {
		var wait time.Duration
		if tokTAT, wait = b.tok.check(now, tokens); wait > 0 {
			v.refuse("tokens", b.tok.capacity, b.tok.used(now), wait)
		}
	}
	if v.dim != "" {
		return v
	}
	if b.req != nil {
		b.req.tat = reqTAT
	}
	if b.tok != nil {
		b.tok.tat = tokTAT
	}
	return verdict{ok: true}
}

func (b *bucket) state(now time.Time) limitState {
	var st limitState
	if b.req != nil {
		st.reqLimit, st.reqRemaining, st.reqReset = b.req.capacity, b.req.capacity-b.req.used(now), b.req.backlog(now)
	}
	if b.tok != nil {
		st.tokLimit, st.tokRemaining, st.tokReset = b.tok.capacity, b.tok.capacity-b.tok.used(now), b.tok.backlog(now)
	}
	return st
}

// gcra is a token bucket of capacity units refilling at capacity per
// window, kept as the generic cell rate algorithm: tat is when the bucket
// will be full again, and each unit pushes it window/capacity later. The
// bucket holds capacity*(window-backlog)/window units, backlog = tat-now.
type gcra struct {
	window   time.Duration
	capacity int
	tat      time.Time
}

func (g *gcra) backlog(now time.Time) time.Duration {
	return max(0, g.tat.Sub(now))
}

// check returns the tat after taking n units at now, and how long before
// the bucket would hold them (0: it does now).
func (g *gcra) check(now time.Time, n int) (time.Time, time.Duration) {
	tat := now.Add(g.backlog(now)).Add(g.cost(n))
	return tat, max(0, tat.Sub(now)-g.window)
}

// cost is how far n units push tat: n*window/capacity, rounded down.
func (g *gcra) cost(n int) time.Duration {
	return time.Duration(mulDiv(uint64(n), uint64(g.window), uint64(g.capacity)))
}

// used is how many units the bucket lacks at now, rounded up so that
// capacity-used is the whole units it holds.
func (g *gcra) used(now time.Time) int {
	held := mulDiv(uint64(g.capacity), uint64(max(0, g.window-g.backlog(now))), uint64(g.window))
	return g.capacity - int(held)
}

// mulDiv is a*b/c without overflowing the product; the quotient must fit.
func mulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// setLimitHeaders writes the limit state in the format's headers.
func setLimitHeaders(h http.Header, format string, st limitState, now time.Time) {
	set := func(dim string, limit, remaining int, reset time.Duration) {
		if limit == 0 {
			return
		}
		if format == OpenAI {
			h.Set("x-ratelimit-limit-"+dim, strconv.Itoa(limit))
			h.Set("x-ratelimit-remaining-"+dim, strconv.Itoa(remaining))
			h.Set("x-ratelimit-reset-"+dim, ceilMillis(reset).String())
			return
		}
		h.Set("anthropic-ratelimit-"+dim+"-limit", strconv.Itoa(limit))
		h.Set("anthropic-ratelimit-"+dim+"-remaining", strconv.Itoa(remaining))
		h.Set("anthropic-ratelimit-"+dim+"-reset", FormatReset(now.Add(reset)))
	}
	set("requests", st.reqLimit, st.reqRemaining, st.reqReset)
	set("tokens", st.tokLimit, st.tokRemaining, st.tokReset)
}

// FormatReset writes an Anthropic reset time: RFC 3339, UTC, with
// milliseconds, rounded up so that it is never early.
func FormatReset(t time.Time) string {
	u := t.UTC()
	if r := u.Sub(u.Truncate(time.Millisecond)); r > 0 {
		u = u.Add(time.Millisecond - r)
	}
	return u.Format("2006-01-02T15:04:05.000Z07:00")
}

// setRetryAfter tells a refused client how long to wait.
func setRetryAfter(h http.Header, format string, wait time.Duration) {
	secs := (wait + time.Second - 1) / time.Second
	h.Set("retry-after", strconv.FormatInt(int64(max(1, secs)), 10))
	if format == OpenAI {
		h.Set("retry-after-ms", strconv.FormatInt(max(1, ceilMillis(wait).Milliseconds()), 10))
	}
}

func ceilMillis(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Millisecond - 1) / time.Millisecond * time.Millisecond
}
