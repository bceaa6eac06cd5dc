package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/digest-cli/digest/internal/provider"
)

// Limits are a model's declared request and token limits.
type Limits struct {
	RPM, TPM int // per Window; 0: not declared, learned from the provider if it says
	// Window is the period RPM and TPM count over: a minute, unless a test
	// scales time down.
	Window time.Duration
}

// paceShare is how much of a window's token quota may go out at once: one
// second's worth of a minute, so a full bucket never fires a minute's
// quota in the first second. Requests go out one at a time, evenly spaced.
const paceShare = 60

// margin keeps the pace a little under the limit: requests reach the
// provider after varying network delays, and bunching by a few
// milliseconds must not tip a window over.
const margin = 0.02

// budget paces one model's requests and tokens. Each bucket refills at
// (limit - margin - burst) per window, so that even a full bucket plus a
// window's refill stays under the limit in any window.
type budget struct {
	mu          sync.Mutex
	window      time.Duration
	declared    Limits
	rpm, tpm    int
	req, tok    *rate.Limiter // nil while that limit is unknown
	credit      int           // tokens reserved but not used, taken off later reservations
	clock       clock         // for the pause; the buckets keep real time
	pausedUntil time.Time
	// shared, when set, paces instead of the buckets, which then only keep
	// the limits as rates. learned* are the limits this process was told
	// of, shared* those the shared limit last reported: a difference is
	// written there. owed is tokens used past their reservation, charged
	// with the next request.
	shared                 SharedLimit
	model                  string
	learnedRPM, learnedTPM int
	sharedRPM, sharedTPM   int
	owed                   int
	onSharedPause          func(d time.Duration)
	// taking serializes gathering a request's tokens: interleaved with
	// others, a request would gather over a long span and then go out
	// bunched with them.
	taking sync.Mutex
}

func newBudget(l Limits, c clock) *budget {
	if l.Window <= 0 {
		l.Window = time.Minute
	}
	b := &budget{window: l.Window, declared: l, clock: c}
	b.setRequests(l.RPM)
	b.setTokens(l.TPM)
	return b
}

func burstOf(limit int) int { return max(1, int(math.Ceil(float64(limit)/paceShare))) }

func (b *budget) rateOf(limit, burst int) rate.Limit {
	return rate.Limit(max(float64(limit)*(1-margin)-float64(burst), 1) / b.window.Seconds())
}

// setRequests applies a requests-per-window limit; callers hold mu or own b.
func (b *budget) setRequests(rpm int) {
	if rpm <= 0 || rpm == b.rpm {
		return
	}
	b.rpm = rpm
	burst := 1
	if b.req == nil {
		b.req = rate.NewLimiter(b.rateOf(rpm, burst), burst)
		return
	}
	b.req.SetBurst(burst)
	b.req.SetLimit(b.rateOf(rpm, burst))
}

// setTokens applies a tokens-per-window limit. The burst, and so a fresh
// bucket, holds one pace's worth: a start must ramp, not burst.
func (b *budget) setTokens(tpm int) {
	if tpm <= 0 || tpm == b.tpm {
		return
	}
	b.tpm = tpm
	burst := burstOf(tpm)
	if b.tok == nil {
		b.tok = rate.NewLimiter(b.rateOf(tpm, burst), burst)
		return
	}
	b.tok.SetBurst(burst)
	b.tok.SetLimit(b.rateOf(tpm, burst))
}

// TooLargeError is a request that needs more tokens than the model's whole
// per-window limit: it could never be admitted, so it is refused up front.
type TooLargeError struct{ Tokens, TPM int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("request needs %d tokens, more than the model's limit of %d tokens per minute", e.Tokens, e.TPM)
}

// TooLargeHint is the advice a TooLargeError comes with; a pipeline whose
// own flags make requests smaller names them instead.
const TooLargeHint = "Try: a shorter request, or a higher --tpm if the model allows it"

// check refuses a request no window can hold, before any waiting.
func (b *budget) check(tokens int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tpm > 0 && tokens > b.tpm {
		tl := &TooLargeError{tokens, b.tpm}
		return &provider.Error{Kind: provider.Permanent, Message: tl.Error(), Hint: TooLargeHint, Err: tl}
	}
	return nil
}

// admit waits until the model is not paused and a request of n tokens may
// go out. The pause is checked again after the buckets: a 429 that came in
// meanwhile holds this request too.
func (b *budget) admit(ctx context.Context, tokens int) error {
	if err := b.waitPause(ctx); err != nil {
		return err
	}
	if err := b.reserve(ctx, tokens); err != nil {
		return err
	}
	return b.waitPause(ctx)
}

func (b *budget) reserve(ctx context.Context, tokens int) error {
	b.mu.Lock()
	req, tok := b.req, b.tok
	n := tokens
	if tok != nil {
		used := min(b.credit, n)
		b.credit -= used
		n -= used
	}
	b.mu.Unlock()
	if b.shared != nil {
		return b.takeShared(ctx, n)
	}
	if req != nil {
		if err := req.Wait(ctx); err != nil {
			return err
		}
	}
	// WaitN refuses more than the burst, and the burst is kept at one
	// pace's worth, so a large request waits for its tokens in steps: the
	// same total wait, without ever letting the bucket burst.
	if tok == nil || n == 0 {
		return nil
	}
	b.taking.Lock()
	defer b.taking.Unlock()
	for n > 0 {
		step := min(n, tok.Burst())
		if err := tok.WaitN(ctx, step); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue // a learned limit shrank the burst meanwhile: step again
		}
		n -= step
	}
	return nil
}

// takeShared charges the shared limit with one request and n tokens, at
// the buckets' rates, and waits what it says. It adopts the limits other
// processes learned, and a pause one of them heard.
func (b *budget) takeShared(ctx context.Context, n int) error {
	b.mu.Lock()
	var reqs, toks Charge
	if b.req != nil {
		reqs = chargeOf(intervalOf(float64(b.req.Limit())), b.req.Burst(), 1)
	}
	if b.tok != nil {
		n += b.owed
		b.owed = 0
		toks = chargeOf(intervalOf(float64(b.tok.Limit())), b.tok.Burst(), n)
	}
	b.mu.Unlock()
	st, err := b.shared.Take(ctx, reqs, toks)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &FatalError{&SharedLimitError{Model: b.model, Err: err}}
	}
	b.mu.Lock()
	b.sharedRPM, b.sharedTPM = st.RPM, st.TPM
	b.adopt(st.RPM, st.TPM)
	b.mu.Unlock()
	if st.Paused > 0 {
		if b.pause(st.Paused) >= VisibleWait && b.onSharedPause != nil {
			b.onSharedPause(st.Paused)
		}
	}
	if st.Wait <= 0 {
		return nil
	}
	return Sleep(ctx, st.Wait)
}

func intervalOf(perSecond float64) time.Duration {
	return time.Duration(float64(time.Second) / perSecond)
}

// adopt applies learned limits under the rule every learning follows: set
// a limit nobody declared, or lower a declared one. Callers hold mu.
func (b *budget) adopt(rpm, tpm int) {
	if rpm > 0 && (b.declared.RPM == 0 || rpm < b.declared.RPM) {
		b.setRequests(rpm)
	}
	if tpm > 0 && (b.declared.TPM == 0 || tpm < b.declared.TPM) {
		b.setTokens(tpm)
	}
}

// share writes the limits this process learned to the shared limit, when
// it does not hold them yet.
func (b *budget) share(ctx context.Context) error {
	if b.shared == nil {
		return nil
	}
	b.mu.Lock()
	rpm, tpm := b.learnedRPM, b.learnedTPM
	if rpm == b.sharedRPM {
		rpm = 0
	}
	if tpm == b.sharedTPM {
		tpm = 0
	}
	b.mu.Unlock()
	if rpm == 0 && tpm == 0 {
		return nil
	}
	if err := b.shared.Learn(ctx, rpm, tpm); err != nil {
		return b.sharedErr(ctx, err)
	}
	b.mu.Lock()
	if rpm > 0 {
		b.sharedRPM = rpm
	}
	if tpm > 0 {
		b.sharedTPM = tpm
	}
	b.mu.Unlock()
	return nil
}

// sharePause pauses every process using the account for d.
func (b *budget) sharePause(ctx context.Context, d time.Duration) error {
	if b.shared == nil {
		return nil
	}
	if err := b.shared.Pause(ctx, d); err != nil {
		return b.sharedErr(ctx, err)
	}
	return nil
}

func (b *budget) sharedErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &FatalError{&SharedLimitError{Model: b.model, Err: err}}
}

// reconcile corrects a reservation with what the call used: a shortfall is
// taken from the bucket now, and the surplus is credited to later
// requests unless refund is false. (rate.Reservation.Cancel cannot do
// this: the reservation has come due.) Providers that send token headers
// charge the reservation up front, max_tokens included, and their headers
// correct the bucket; refunding by usage would overspend them.
func (b *budget) reconcile(reserved, used int, refund bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tok == nil {
		return
	}
	switch {
	case used < reserved && refund:
		// Capped, so that savings cannot pile up into a burst.
		b.credit = min(b.credit+reserved-used, max(b.tpm/10, burstOf(b.tpm)))
	case used > reserved:
		// A server's count is not trusted past one window's worth: more
		// would hold the model for hours on one wrong number.
		if b.shared != nil {
			b.owed = min(b.owed+used-reserved, b.tpm)
			return
		}
		b.drain(min(used-reserved, b.tpm))
	}
}

// drain takes n tokens from the token bucket without waiting, running it
// into debt that later requests wait out.
func (b *budget) drain(n int) {
	for n > 0 {
		step := min(n, b.tok.Burst())
		b.tok.ReserveN(time.Now(), step)
		n -= step
	}
}

// learn adopts what the provider says of its limits: it sets limits that
// were not declared (or lowers declared ones the provider says are lower)
// and drains the local buckets when the provider has less left than they
// hold. When the provider has no requests left at all it returns how long
// the model should pause, for the caller to weigh against its longest wait.
func (b *budget) learn(l *provider.Limits) (pause time.Duration) {
	if l == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.RequestsLimit > 0 && (b.declared.RPM == 0 || l.RequestsLimit < b.declared.RPM) {
		b.setRequests(l.RequestsLimit)
		b.learnedRPM = l.RequestsLimit
	}
	if l.TokensLimit > 0 && (b.declared.TPM == 0 || l.TokensLimit < b.declared.TPM) {
		b.setTokens(l.TokensLimit)
		b.learnedTPM = l.TokensLimit
	}
	now := time.Now()
	// Reset is when the provider's bucket is full again, not when it has
	// room: with nothing left, wait for one request's worth of refill. An
	// empty token bucket is drained locally below, which paces the wait.
	if l.RequestsRemaining == 0 && l.RequestsReset > 0 {
		pause = l.RequestsReset
		if l.RequestsLimit > 0 {
			pause /= time.Duration(l.RequestsLimit)
		}
	}
	if b.req != nil && l.RequestsRemaining >= 0 {
		if extra := b.req.TokensAt(now) - float64(l.RequestsRemaining); extra >= 1 {
			b.req.ReserveN(now, int(extra))
		}
	}
	if b.tok != nil && l.TokensRemaining >= 0 {
		if extra := b.tok.TokensAt(now) - float64(l.TokensRemaining); extra >= 1 {
			b.drain(int(extra))
		}
	}
	return pause
}

// learn429 guesses a limit nobody declared and no header told: what went
// through in the last window is what the provider allows.
func (b *budget) learn429(admittedInWindow int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.declared.RPM == 0 && admittedInWindow > 0 && (b.rpm == 0 || admittedInWindow < b.rpm) {
		b.setRequests(admittedInWindow)
		b.learnedRPM = admittedInWindow
	}
}

// pause stops every request to the model for d from now. It returns how
// much later the pause now ends than it did (0 when one already running
// ends later), so that a pause several workers hear of at once is
// reported once.
func (b *budget) pause(d time.Duration) (extended time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	until := now.Add(d)
	was := b.pausedUntil
	if was.Before(now) {
		was = now
	}
	if until.After(b.pausedUntil) {
		b.pausedUntil = until
	}
	return max(until.Sub(was), 0)
}

func (b *budget) waitPause(ctx context.Context) error {
	for {
		b.mu.Lock()
		d := b.pausedUntil.Sub(b.clock.Now())
		b.mu.Unlock()
		if d <= 0 {
			return nil
		}
		if err := b.clock.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// Sleep waits d or until ctx is done, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
