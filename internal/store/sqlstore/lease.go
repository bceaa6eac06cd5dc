package sqlstore

import (
	"context"
	"database/sql"
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

// ClaimAll is Claim for each of keys, in one transaction: work claimed as
// it is reached then costs a transaction per run of keys, not per key, each
// contending with the writes of results. won[i] reports whether owner holds
// keys[i] now.
func (s *DB) ClaimAll(ctx context.Context, keys []string, owner string, ttl time.Duration) (won []bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.explain(err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	now := s.d.NowMillis
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO leases(key, owner, expires_at) VALUES (?, ?, `+now+` + ?)
		ON CONFLICT(key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE leases.expires_at <= `+now+` OR leases.owner = excluded.owner`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer stmt.Close()
	won = make([]bool, len(keys))
	for i, key := range keys {
		res, err := stmt.ExecContext(ctx, key, owner, ttl.Milliseconds())
		if err != nil {
			return nil, s.explain(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, s.explain(err)
		}
		won[i] = n == 1
	}
	if err := tx.Commit(); err != nil {
		return nil, s.explain(err)
	}
	return won, nil
}

// Release gives up owner's lease on key, if owner still holds it.
func (s *DB) Release(ctx context.Context, key, owner string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM leases WHERE key = ? AND owner = ?`, key, owner); err != nil {
		return s.explain(err)
	}
	return nil
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
