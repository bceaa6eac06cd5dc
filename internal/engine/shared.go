package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// SharedLimit is a model's rate limit kept where every process using the
// same account (provider, base URL, model, API key) reads and charges it:
// processes that each paced themselves to the full limit would together
// send a multiple of it. A SharedLimit is safe for concurrent use; its
// errors mean it could not be reached, and stop the run.
type SharedLimit interface {
	// Take charges one request and its tokens, atomically for every
	// process, and says how long the request must wait before it goes
	// out. A charge of zero cost and burst only waits out the pause and
	// what was charged before.
	Take(ctx context.Context, requests, tokens Charge) (SharedState, error)
	// Pause holds every process's requests until d from now, unless a
	// pause already runs longer.
	Pause(ctx context.Context, d time.Duration) error
	// Learn records limits the provider told of, per window; a zero keeps
	// what was known. Take reports them to every process.
	Learn(ctx context.Context, rpm, tpm int) error
}

// Charge is what one request costs a limit: Cost is its units times the
// limit's interval per unit, Burst how far ahead of the steady pace the
// limit lets requests go.
type Charge struct{ Cost, Burst time.Duration }

// SharedState is what Take found.
type SharedState struct {
	Wait     time.Duration // before the charged request may go out
	Paused   time.Duration // how much longer the model is paused
	RPM, TPM int           // limits learned by any process; 0: none
}

// SharedLimitError is a shared limit that could not be reached: the run
// stops rather than pace itself alone, which would overrun the limit the
// other processes count on.
type SharedLimitError struct {
	Model string
	Err   error
}

func (e *SharedLimitError) Error() string {
	msg := fmt.Sprintf("%s: the rate limit shared with other processes could not be reached: %v", e.Model, e.Err)
	if !strings.Contains(msg, "Try:") {
		msg += ". Try: check that the database (--db) is reachable, and run again; stored results are kept"
	}
	return msg
}

func (e *SharedLimitError) Unwrap() error { return e.Err }

// chargeOf is units of a bucket whose rate gives one unit per interval
// and which holds burst units, as a GCRA charge: the same limit as the
// local bucket, margin and all.
func chargeOf(interval time.Duration, burst, units int) Charge {
	return Charge{Cost: interval * time.Duration(units), Burst: interval * time.Duration(burst)}
}
