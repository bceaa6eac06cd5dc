package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"
)

// Claim takes the lease on key for owner until ttl from now: atomically, it
// inserts the lease, or takes it over if it has expired or is owner's
// already. It reports whether owner holds the lease now.
func (s *DB) Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	won, err := s.ClaimAll(ctx, []string{key}, owner, ttl)
	if err != nil {
		return false, err
	}
	return won[0], nil
}

// ClaimAll is Claim for each of keys: work claimed as a run reads ahead
// costs a statement or two per leaseChunk keys, not a transaction per key.
// won[i] reports whether owner holds keys[i] now.
//
// The free keys are taken by one INSERT that leaves the others alone, in
// key order: it waits only on another claim inserting the same key, and
// two claims inserting overlapping keys in the same order cannot wait on
// each other in a circle. Of the keys held, one query finds those expired
// or owner's own, and each of them is taken over by a statement of its
// own (rare: a holder that died elsewhere, a key claimed again), so that
// no statement holds one lease's lock while it waits for another's. Each
// statement commits on its own, and each key is won or lost atomically.
func (s *DB) ClaimAll(ctx context.Context, keys []string, owner string, ttl time.Duration) ([]bool, error) {
	unique := slices.Compact(slices.Sorted(slices.Values(keys)))
	held := make(map[string]bool, len(unique))
	now := s.d.NowMillis
	for chunk := range slices.Chunk(unique, leaseChunk) {
		args := make([]any, 0, 3*len(chunk))
		for _, k := range chunk {
			args = append(args, k, owner, ttl.Milliseconds())
		}
		taken, err := s.returnedKeys(ctx, `INSERT INTO leases(key, owner, expires_at) VALUES `+
			repeatList("(?, ?, "+now+" + ?)", len(chunk))+` ON CONFLICT(key) DO NOTHING RETURNING key`, args...)
		if err != nil {
			return nil, err
		}
		var rest []string
		for _, k := range chunk {
			if taken[k] {
				held[k] = true
			} else {
				rest = append(rest, k)
			}
		}
		if len(rest) == 0 {
			continue
		}
		takeable, err := s.returnedKeys(ctx, `SELECT key FROM leases WHERE key IN (`+repeatList("?", len(rest))+`)
			AND (expires_at <= `+now+` OR owner = ?)`, append(anys(rest), owner)...)
		if err != nil {
			return nil, err
		}
		for _, k := range rest {
			if !takeable[k] {
				continue
			}
			res, err := s.db.ExecContext(ctx, `UPDATE leases SET owner = ?, expires_at = `+now+` + ?
				WHERE key = ? AND (expires_at <= `+now+` OR owner = ?)`, owner, ttl.Milliseconds(), k, owner)
			if err != nil {
				return nil, s.explain(err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return nil, s.explain(err)
			}
			held[k] = n == 1
		}
	}
	won := make([]bool, len(keys))
	for i, k := range keys {
		won[i] = held[k]
	}
	return won, nil
}

// leaseChunk is how many keys one lease statement names at most: three
// parameters each, well under every database's limit.
const leaseChunk = 500

// returnedKeys runs a statement that returns a key per row.
func (s *DB) returnedKeys(ctx context.Context, q string, args ...any) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	keys := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, s.explain(err)
		}
		keys[k] = true
	}
	return keys, s.explain(rows.Err())
}

// repeatList is n copies of item, separated by commas.
func repeatList(item string, n int) string {
	return strings.Repeat(item+", ", n-1) + item
}

// Release gives up owner's lease on key, if owner still holds it.
func (s *DB) Release(ctx context.Context, key, owner string) error {
	return s.ReleaseAll(ctx, []string{key}, owner)
}

// ReleaseAll gives up owner's leases on keys, those owner still holds, a
// statement per leaseChunk keys.
func (s *DB) ReleaseAll(ctx context.Context, keys []string, owner string) error {
	for chunk := range slices.Chunk(slices.Sorted(slices.Values(keys)), leaseChunk) {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM leases WHERE owner = ? AND key IN (`+repeatList("?", len(chunk))+`)`,
			append([]any{owner}, anys(chunk)...)...); err != nil {
			return s.explain(err)
		}
	}
	return nil
}

// LeaseHolders returns who holds the leases among keys, by key.
func (s *DB) LeaseHolders(ctx context.Context, keys []string) (map[string]string, error) {
	holders := map[string]string{}
	for chunk := range slices.Chunk(keys, leaseChunk) {
		rows, err := s.db.QueryContext(ctx, `SELECT key, owner FROM leases WHERE key IN (`+repeatList("?", len(chunk))+`)`, anys(chunk)...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			var k, owner string
			if err := rows.Scan(&k, &owner); err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			holders[k] = owner
		}
		if err := rows.Close(); err != nil {
			return nil, s.explain(err)
		}
	}
	return holders, nil
}

// anys is ss as a statement's arguments.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// LeaseOwner returns who holds the lease on key, if anyone does.
func (s *DB) LeaseOwner(ctx context.Context, key string) (string, bool, error) {
	var owner string
	err := s.db.QueryRowContext(ctx, `SELECT owner FROM leases WHERE key = ?`, key).Scan(&owner)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, s.explain(err)
	}
	return owner, true, nil
}

// TakeOver gives the lease on key to owner if it is still held by from:
// for a lease whose holder is known to be dead.
func (s *DB) TakeOver(ctx context.Context, key, from, owner string, ttl time.Duration) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE leases SET owner = ?, expires_at = `+s.d.NowMillis+` + ? WHERE key = ? AND owner = ?`,
		owner, ttl.Milliseconds(), key, from)
	if err != nil {
		return false, s.explain(err)
	}
	n, err := res.RowsAffected()
	return n == 1, s.explain(err)
}

// Renew pushes the expiry of every lease owner holds to ttl from now, and
// reports how many it holds.
func (s *DB) Renew(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE leases SET expires_at = `+s.d.NowMillis+` + ? WHERE owner = ?`, ttl.Milliseconds(), owner)
	if err != nil {
		return 0, s.explain(err)
	}
	n, err := res.RowsAffected()
	return int(n), s.explain(err)
}

// LeaseOwners lists the owners of the leases held, expired or not.
func (s *DB) LeaseOwners(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT owner FROM leases`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var owners []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, s.explain(err)
		}
		owners = append(owners, o)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	return owners, nil
}

// DropLeases deletes every lease of owner, and every lease that has expired.
func (s *DB) DropLeases(ctx context.Context, owner string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM leases WHERE owner = ? OR expires_at <= `+s.d.NowMillis, owner); err != nil {
		return s.explain(err)
	}
	return nil
}
