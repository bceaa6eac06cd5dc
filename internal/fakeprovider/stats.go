package fakeprovider

import "time"

// Stats is what a server has done. Every request lands in Requests and, once
// answered, in exactly one of the outcome counts.
type Stats struct {
	Window time.Duration // the server's Window

	Requests     int // every HTTP request received
	Succeeded    int // 200 with a well-formed answer
	RateLimited  int // 429s, TooLarge included
	TooLarge     int // 429s for a request whose estimate alone exceeds TPM
	ServerErrors int // injected 500, 503 and 529
	Malformed    int // injected truncated 200s
	Hung         int // injected hangs (held until the client or server gave up)
	Canceled     int // clients that went away during Latency or while sending the body
	Unauthorized int // 401s
	BadRequest   int // 400s and 405s
	NotFound     int // 404s
	BatchCalls   int // batch endpoint calls answered 2xx

	// BatchesCreated and BatchItems count the batches created and the
	// items in them; BatchItemsAnswered the items answered (succeeded or
	// errored: what a real batch bills), each once however often its
	// results are read.
	BatchesCreated, BatchItems, BatchItemsAnswered int
	// BatchesRefused counts the batches the account's queue had no room
	// for (see BatchAPIConfig.QueueTokens): OpenAI's are created failed and
	// counted in BatchesCreated, their items not in BatchItems; Anthropic's
	// are answered 429 and not created.
	BatchesRefused int
	// BatchLists counts the list endpoint calls answered (also counted in
	// BatchCalls): how often a client looked for its batches.
	BatchLists int

	// Admitted is every request the limiter admitted, in admission order
	// (which is time order), whatever became of it afterwards.
	Admitted []Admission
	// RateLimitedAt is when each 429 was decided.
	RateLimitedAt []time.Time
	// Windows counts per fixed window from the server's start: Windows[i]
	// covers [start+i*Window, start+(i+1)*Window).
	Windows []WindowCount
	// MaxRequestsInWindow and MaxTokensInWindow are the most requests and
	// estimated tokens admitted within any interval of length Window
	// (MaxInWindow over all admissions). Under SlidingWindow they never
	// exceed RPM and TPM.
	MaxRequestsInWindow, MaxTokensInWindow int
}

// Admission is one admitted request.
type Admission struct {
	At     time.Time // by the server's clock
	Tokens int       // the estimate TPM was charged
	Format string
}

// WindowCount is one fixed window's traffic.
type WindowCount struct {
	Start       time.Time
	Requests    int // admitted
	Tokens      int // estimated tokens admitted
	RateLimited int // 429s
}

// MaxInWindow is the most requests and tokens admitted within any interval
// of length Window, counting only admissions at or after from (the zero
// time counts all): the sliding-window reading of "per minute", where an
// interval (t-Window, t] holds what was admitted after t-Window up to t.
func (s Stats) MaxInWindow(from time.Time) (requests, tokens int) {
	adm := s.Admitted
	for len(adm) > 0 && adm[0].At.Before(from) {
		adm = adm[1:]
	}
	lo, sum := 0, 0
	for hi, a := range adm {
		sum += a.Tokens
		for lo < hi && !adm[lo].At.After(a.At.Add(-s.Window)) {
			sum -= adm[lo].Tokens
			lo++
		}
		requests = max(requests, hi-lo+1)
		tokens = max(tokens, sum)
	}
	return requests, tokens
}

// RateLimitedSince counts the 429s decided at or after t.
func (s Stats) RateLimitedSince(t time.Time) int {
	n := 0
	for _, at := range s.RateLimitedAt {
		if !at.Before(t) {
			n++
		}
	}
	return n
}

// LimitUse is the share of the request and token limits (each per Window)
// used from skip after the first admission to the last: 1 is all the limit
// allows in that time. Skipping a Window leaves out a fresh bucket's first
// burst, to read the steady state. A limit of 0 reads as 0.
func (s Stats) LimitUse(rpm, tpm int, skip time.Duration) (requests, tokens float64) {
	if len(s.Admitted) == 0 {
		return 0, 0
	}
	from := s.Admitted[0].At.Add(skip)
	windows := s.Admitted[len(s.Admitted)-1].At.Sub(from).Seconds() / s.Window.Seconds()
	if windows <= 0 {
		return 0, 0
	}
	reqs, toks := 0, 0
	for _, a := range s.Admitted {
		if !a.At.Before(from) {
			reqs++
			toks += a.Tokens
		}
	}
	if rpm > 0 {
		requests = float64(reqs) / (float64(rpm) * windows)
	}
	if tpm > 0 {
		tokens = float64(toks) / (float64(tpm) * windows)
	}
	return requests, tokens
}
