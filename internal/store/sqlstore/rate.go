package sqlstore

import (
	"context"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// nowMicros is the database's clock, read once per statement: PostgreSQL's
// clock_timestamp moves between two reads in one statement, and the charge
// must be measured from the same now it is returned against. SQLite wants a
// WHERE on an INSERT ... SELECT that has an ON CONFLICT clause, and
// PostgreSQL the types of parameters that stand alone in a SELECT list.
func (s *DB) nowMicros() string {
	return `FROM (SELECT ` + s.d.NowMillis + ` * 1000 AS n) AS clock WHERE true`
}

// TakeRate charges one request to limiter's GCRA limits in one statement.
// The new row, or the updated one, is the whole of the state: the cost of
// this charge travels in as the distance from the row's updated_at to its
// theoretical arrival times, so that the update needs no second reading of
// the clock.
func (s *DB) TakeRate(ctx context.Context, limiter string, requests, tokens store.RateCharge) (store.RateState, error) {
	g := s.d.Greatest
	q := `INSERT INTO rate_limits(limiter, requests_tat, tokens_tat, paused_until, requests, tokens, updated_at)
		SELECT CAST(? AS TEXT), n + CAST(? AS BIGINT), n + CAST(? AS BIGINT), 0, 0, 0, n ` + s.nowMicros() + `
		ON CONFLICT(limiter) DO UPDATE SET
			requests_tat = ` + g + `(rate_limits.requests_tat, excluded.updated_at, rate_limits.paused_until) + (excluded.requests_tat - excluded.updated_at),
			tokens_tat = ` + g + `(rate_limits.tokens_tat, excluded.updated_at, rate_limits.paused_until) + (excluded.tokens_tat - excluded.updated_at),
			updated_at = excluded.updated_at
		RETURNING requests_tat - updated_at, tokens_tat - updated_at, paused_until - updated_at, requests, tokens`
	var reqAhead, tokAhead, paused, learnedReq, learnedTok int64
	err := s.db.QueryRowContext(ctx, q, limiter, micros(requests.Cost), micros(tokens.Cost)).
		Scan(&reqAhead, &tokAhead, &paused, &learnedReq, &learnedTok)
	if err != nil {
		return store.RateState{}, s.explain(err)
	}
	st := store.RateState{
		Paused:   max(time.Duration(paused)*time.Microsecond, 0),
		Requests: int(learnedReq), Tokens: int(learnedTok),
	}
	st.Wait = max(
		time.Duration(reqAhead)*time.Microsecond-requests.Burst,
		time.Duration(tokAhead)*time.Microsecond-tokens.Burst,
		st.Paused, 0)
	return st, nil
}

// PauseRate holds limiter until d from the database's now, unless it is
// held longer already.
func (s *DB) PauseRate(ctx context.Context, limiter string, d time.Duration) error {
	q := `INSERT INTO rate_limits(limiter, requests_tat, tokens_tat, paused_until, requests, tokens, updated_at)
		SELECT CAST(? AS TEXT), n, n, n + CAST(? AS BIGINT), 0, 0, n ` + s.nowMicros() + `
		ON CONFLICT(limiter) DO UPDATE SET
			paused_until = ` + s.d.Greatest + `(rate_limits.paused_until, excluded.paused_until)`
	if _, err := s.db.ExecContext(ctx, q, limiter, micros(d)); err != nil {
		return s.explain(err)
	}
	return nil
}

// LearnRate records the limits a provider told of; zeros keep what was.
func (s *DB) LearnRate(ctx context.Context, limiter string, requests, tokens int) error {
	q := `INSERT INTO rate_limits(limiter, requests_tat, tokens_tat, paused_until, requests, tokens, updated_at)
		SELECT CAST(? AS TEXT), n, n, 0, CAST(? AS BIGINT), CAST(? AS BIGINT), n ` + s.nowMicros() + `
		ON CONFLICT(limiter) DO UPDATE SET
			requests = CASE WHEN excluded.requests > 0 THEN excluded.requests ELSE rate_limits.requests END,
			tokens = CASE WHEN excluded.tokens > 0 THEN excluded.tokens ELSE rate_limits.tokens END`
	if _, err := s.db.ExecContext(ctx, q, limiter, max(requests, 0), max(tokens, 0)); err != nil {
		return s.explain(err)
	}
	return nil
}

// micros rounds d up to whole microseconds, the limiter's unit: rounding
// down would let many small charges add up to more than the limit.
func micros(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}
