package sqlstore

import (
	"context"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// nowMicros is the FROM clause of every rate statement: the database's
// clock, read once per statement (PostgreSQL's clock_timestamp moves
// between two reads in one statement, and the charge must be measured from
// the same now it is returned against), and the dialect's NoFlush, so that
// the statement commits without waiting for the disk.
//
// The limiter's row is locked from the statement until its commit, so a
// commit that waits for its write to reach the disk, or a synchronous
// standby, holds every other process's take behind it: the whole fleet
// was held to one take per commit latency (340-400 a second at 2 ms). A
// commit that does not wait is seen by every session at once, as any
// commit is, so the limit stays one; what a crash of the server can lose is
// the last moments of pacing state (PostgreSQL flushes it within three
// times wal_writer_delay, 600 ms by default), after which the limiter
// starts as if those takes had not happened. Nothing paid is in it: the
// answers are stored by other statements, which do wait.
//
// SQLite wants a WHERE on an INSERT ... SELECT that has an ON CONFLICT
// clause, and PostgreSQL the types of parameters that stand alone in a
// SELECT list. The WHERE names NoFlush's column, so that no planner can
// leave it unevaluated.
func (s *DB) nowMicros() string {
	if s.d.NoFlush == "" {
		return `FROM (SELECT ` + s.d.NowMillis + ` * 1000 AS n) AS clock WHERE true`
	}
	return `FROM (SELECT ` + s.d.NowMillis + ` * 1000 AS n, ` + s.d.NoFlush + ` AS no_flush) AS clock WHERE clock.no_flush = 'off'`
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
