package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// ForgeAnswers returns the stored forge answers among keys that have not
// expired by the database's clock, keyed by key.
func (s *DB) ForgeAnswers(ctx context.Context, keys []string) (map[string][]byte, error) {
	found := make(map[string][]byte)
	unique := slices.Compact(slices.Sorted(slices.Values(keys)))
	for chunk := range slices.Chunk(unique, lookupChunk) {
		rows, err := s.db.QueryContext(ctx, `SELECT key, body FROM forge_answers WHERE key IN (`+repeatList("?", len(chunk))+`)
			AND (expires_at = 0 OR expires_at > `+s.d.NowMillis+`)`, anys(chunk)...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			var k string
			var body []byte
			if err := rows.Scan(&k, &body); err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			found[k] = body
		}
		if err := rows.Close(); err != nil {
			return nil, s.explain(err)
		}
		if err := rows.Err(); err != nil {
			return nil, s.explain(err)
		}
	}
	return found, nil
}

// SaveForgeAnswer stores body under key until ttl from the database's
// now (0: for ever), in one statement: an answer kept for ever is
// replaced only by another kept for ever.
func (s *DB) SaveForgeAnswer(ctx context.Context, key string, body []byte, ttl time.Duration) error {
	if ttl < 0 {
		return fmt.Errorf("forge answer %s: negative time to keep it (%s)", key, ttl)
	}
	if body == nil {
		body = []byte{}
	}
	// Rounded up, so that a ttl under a millisecond still expires.
	ms := (ttl + time.Millisecond - 1) / time.Millisecond
	_, err := s.db.ExecContext(ctx, `INSERT INTO forge_answers(key, body, expires_at, created_at)
		VALUES (?, ?, CASE WHEN CAST(? AS BIGINT) = 0 THEN 0 ELSE `+s.d.NowMillis+` + CAST(? AS BIGINT) END, ?)
		ON CONFLICT(key) DO UPDATE SET body = excluded.body, expires_at = excluded.expires_at, created_at = excluded.created_at
		WHERE forge_answers.expires_at <> 0 OR excluded.expires_at = 0`,
		key, body, int64(ms), int64(ms), s.timeArg(time.Now(), time.RFC3339Nano))
	return s.explain(err)
}
