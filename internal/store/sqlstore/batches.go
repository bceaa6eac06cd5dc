package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// sortableTime is how SQLite stores times that rows are ordered by: UTC
// and of a fixed width, so that the text sorts as the times compare
// (RFC3339Nano drops trailing zeros, and "05Z" sorts after "05.1Z"). Rows
// written before in RFC3339Nano still parse.
const sortableTime = "2006-01-02T15:04:05.000000000Z07:00"

// CreateBatch records a batch, its items and their members in one
// transaction, before the provider hears of it. A zero CreatedAt is now, an
// empty Status "creating", and zero Items the number of items given.
func (s *DB) CreateBatch(ctx context.Context, b store.Batch, items []store.BatchItem) (err error) {
	if b.ID == "" {
		return fmt.Errorf("database %s: a batch of %s has no id. Try: give every batch an id before recording it", s.name, b.Model)
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if it.CustomID == "" || seen[it.CustomID] {
			return fmt.Errorf("database %s: batch %s has an item with custom id %q, empty or used twice. Try: one distinct custom id per item", s.name, b.ID, it.CustomID)
		}
		seen[it.CustomID] = true
	}
	if b.CreatedAt.IsZero() {
		b.CreatedAt = time.Now()
	}
	if b.Status == "" {
		b.Status = "creating"
	}
	if b.Items == 0 {
		b.Items = len(items)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	// DO NOTHING rather than a failed insert: a repeated id is then told
	// apart from other failures the same way by every database.
	res, err := tx.ExecContext(ctx, `INSERT INTO batches(id, model, base_url, provider_id, status, items,
		succeeded, errored, canceled, expired, message, collected, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		b.ID, b.Model, b.BaseURL, b.ProviderID, b.Status, b.Items,
		b.Succeeded, b.Errored, b.Canceled, b.Expired, b.Message, b.Collected,
		s.timeArg(b.CreatedAt, sortableTime), s.timeArg(time.Now(), sortableTime))
	if err != nil {
		return s.explain(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.explain(err)
	} else if n == 0 {
		return fmt.Errorf("database %s: batch %s is recorded already; nothing was recorded again. Try: a new id for a new batch", s.name, b.ID)
	}
	err = insertRows(ctx, tx, `INSERT INTO batch_items(batch_id, custom_id, request, done, answer, input_tokens, output_tokens, finish, cache_read_tokens, cache_write_tokens, error) VALUES `,
		"", 11, len(items), func(i int, args []any) []any {
			it := items[i]
			return append(args, b.ID, it.CustomID, nullBytes(packRequest(it.Request)), it.Done, it.Answer, it.InputTokens, it.OutputTokens, it.Finish, it.CacheReadTokens, it.CacheWriteTokens, it.Error)
		})
	if err != nil {
		return s.explain(err)
	}
	type member struct {
		customID, member string
		pos              int
	}
	var members []member
	for _, it := range items {
		for pos, m := range it.Members {
			members = append(members, member{it.CustomID, m, pos})
		}
	}
	// A member named twice in one item is one member of it.
	err = insertRows(ctx, tx, `INSERT INTO batch_members(batch_id, custom_id, member, pos, model) VALUES `,
		" ON CONFLICT DO NOTHING", 5, len(members), func(i int, args []any) []any {
			m := members[i]
			return append(args, b.ID, m.customID, m.member, m.pos, b.Model)
		})
	if err != nil {
		return s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		return s.explain(err)
	}
	return nil
}

// rowsPerInsert is how many rows one INSERT of insertRows carries: a
// statement per row costs a round trip each, seconds for a batch of tens of
// thousands of items on a PostgreSQL server, while 200 rows of 8 columns
// stay well under either database's limit of bound parameters.
const rowsPerInsert = 200

// insertRows inserts n rows of cols columns, rowsPerInsert to a statement
// (prepared once for the full ones), in the order given: head is the
// statement up to its VALUES, tail what follows them, and row appends the
// i-th row's values to args.
func insertRows(ctx context.Context, tx *txn, head, tail string, cols, n int, row func(i int, args []any) []any) error {
	statement := func(rows int) string {
		one := "(?" + strings.Repeat(", ?", cols-1) + ")"
		return head + one + strings.Repeat(", "+one, rows-1) + tail
	}
	var full *sql.Stmt
	args := make([]any, 0, rowsPerInsert*cols)
	for start := 0; start < n; start += rowsPerInsert {
		end := min(start+rowsPerInsert, n)
		args = args[:0]
		for i := start; i < end; i++ {
			args = row(i, args)
		}
		if end-start < rowsPerInsert {
			if _, err := tx.ExecContext(ctx, statement(end-start), args...); err != nil {
				return err
			}
			continue
		}
		if full == nil {
			var err error
			if full, err = tx.PrepareContext(ctx, statement(rowsPerInsert)); err != nil {
				return err
			}
			defer full.Close()
		}
		if _, err := full.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// packRequest compresses a request for the time its batch runs: a
// summarize request is up to eight diffs of 4,000 tokens, and a long
// history's batches would otherwise hold its whole diff text at once.
func packRequest(b []byte) []byte {
	if b == nil {
		return nil
	}
	return gz(b)
}

// unpackRequest reads what packRequest stored; a request stored as it was
// (JSON, which never starts with gzip's magic) is returned as it is.
func unpackRequest(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	return gunzip(b)
}

// nullBytes stores an absent request as NULL whichever way the driver
// would bind an empty slice.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// UpdateBatch records what the provider last said of a batch; its model,
// server and creation time stay as recorded, and so does all of a
// collected batch.
func (s *DB) UpdateBatch(ctx context.Context, b store.Batch) error {
	res, err := s.db.ExecContext(ctx, `UPDATE batches SET provider_id = ?, status = ?, items = ?, succeeded = ?, errored = ?,
		canceled = ?, expired = ?, message = ?, collected = ?, updated_at = ? WHERE id = ? AND NOT collected`,
		b.ProviderID, b.Status, b.Items, b.Succeeded, b.Errored, b.Canceled, b.Expired, b.Message, b.Collected,
		s.timeArg(time.Now(), sortableTime), b.ID)
	if err != nil {
		return s.explain(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.explain(err)
	} else if n > 0 {
		return nil
	}
	var one int
	switch err := s.db.QueryRowContext(ctx, `SELECT 1 FROM batches WHERE id = ?`, b.ID).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("database %s: batch %s is not recorded, so it cannot be updated. Try: CreateBatch before the provider hears of it", s.name, b.ID)
	case err != nil:
		return s.explain(err)
	}
	return nil
}

// Batches lists the recorded batches, newest first; with open, only those
// whose results are not all stored.
func (s *DB) Batches(ctx context.Context, open bool) ([]store.Batch, error) {
	where := ""
	if open {
		where = "WHERE NOT collected" // as batches_open's, so that it is used
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, model, base_url, provider_id, status, items, succeeded, errored,
		canceled, expired, message, collected, created_at, updated_at FROM batches `+where+` ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []store.Batch
	for rows.Next() {
		var b store.Batch
		var created, updated dbTime
		if err := rows.Scan(&b.ID, &b.Model, &b.BaseURL, &b.ProviderID, &b.Status, &b.Items, &b.Succeeded, &b.Errored,
			&b.Canceled, &b.Expired, &b.Message, &b.Collected, &created, &updated); err != nil {
			return nil, s.explain(err)
		}
		if !created.Valid {
			return nil, fmt.Errorf("database %s: batch %s has an unreadable created_at: %v", s.name, b.ID, created.Err)
		}
		if !updated.Valid {
			return nil, fmt.Errorf("database %s: batch %s has an unreadable updated_at: %v", s.name, b.ID, updated.Err)
		}
		b.CreatedAt, b.UpdatedAt = created.Time, updated.Time
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	return out, nil
}

// BatchItems returns a batch's items, requests, results and members, in
// the order they were recorded; members in the order they were given.
func (s *DB) BatchItems(ctx context.Context, batchID string) ([]store.BatchItem, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT custom_id, request, done, answer, input_tokens, output_tokens, finish, cache_read_tokens, cache_write_tokens, error
		FROM batch_items WHERE batch_id = ? ORDER BY seq`, batchID)
	if err != nil {
		return nil, s.explain(err)
	}
	var items []store.BatchItem
	index := make(map[string]int)
	for rows.Next() {
		it := store.BatchItem{BatchID: batchID}
		if err := rows.Scan(&it.CustomID, &it.Request, &it.Done, &it.Answer, &it.InputTokens, &it.OutputTokens, &it.Finish, &it.CacheReadTokens, &it.CacheWriteTokens, &it.Error); err != nil {
			rows.Close()
			return nil, s.explain(err)
		}
		if it.Request, err = unpackRequest(it.Request); err != nil {
			rows.Close()
			return nil, fmt.Errorf("database %s: batch %s item %s: the stored request cannot be read: %w", s.name, batchID, it.CustomID, err)
		}
		index[it.CustomID] = len(items)
		items = append(items, it)
	}
	if err := rows.Close(); err != nil {
		return nil, s.explain(err)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	if len(items) == 0 {
		return nil, nil
	}
	rows, err = s.db.QueryContext(ctx, `SELECT custom_id, member FROM batch_members WHERE batch_id = ? ORDER BY custom_id, pos`, batchID)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var customID, member string
		if err := rows.Scan(&customID, &member); err != nil {
			return nil, s.explain(err)
		}
		if i, ok := index[customID]; ok {
			items[i].Members = append(items[i].Members, member)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	return items, nil
}

// BatchMembers returns, for each of members an item of a batch of model
// holds, the newest such item: its batch created last, and of items of
// batches created at one time, the one recorded last. Members are looked
// up lookupChunk at a time, with the members of every item holding one,
// and the newest is picked here: a member is in few items.
func (s *DB) BatchMembers(ctx context.Context, model string, members []string) (map[string]store.BatchItem, error) {
	type pick struct {
		item    itemKey
		created dbTime
		seq     int64
	}
	picked := make(map[string]pick)
	items := make(map[itemKey]store.BatchItem)
	for start := 0; start < len(members); start += lookupChunk {
		chunk := members[start:min(start+lookupChunk, len(members))]
		args := []any{model}
		for _, m := range chunk {
			args = append(args, m)
		}
		in := `m.model = ? AND m.member IN (?` + strings.Repeat(",?", len(chunk)-1) + `)`
		rows, err := s.db.QueryContext(ctx, `SELECT m.member, i.batch_id, i.custom_id, i.seq, b.created_at,
			i.done, i.answer, i.input_tokens, i.output_tokens, i.finish, i.cache_read_tokens, i.cache_write_tokens, i.error
			FROM batch_members m
			JOIN batch_items i ON i.batch_id = m.batch_id AND i.custom_id = m.custom_id
			JOIN batches b ON b.id = m.batch_id
			WHERE `+in, args...)
		if err != nil {
			return nil, s.explain(err)
		}
		fresh := make(map[itemKey]bool)
		for rows.Next() {
			var member string
			var p pick
			var it store.BatchItem
			if err := rows.Scan(&member, &it.BatchID, &it.CustomID, &p.seq, &p.created,
				&it.Done, &it.Answer, &it.InputTokens, &it.OutputTokens, &it.Finish, &it.CacheReadTokens, &it.CacheWriteTokens, &it.Error); err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			p.item = itemKey{it.BatchID, it.CustomID}
			if _, ok := items[p.item]; !ok {
				items[p.item] = it
				fresh[p.item] = true
			}
			if old, ok := picked[member]; ok && (old.created.Time.After(p.created.Time) || old.created.Time.Equal(p.created.Time) && old.seq > p.seq) {
				continue
			}
			picked[member] = p
		}
		if err := rows.Close(); err != nil {
			return nil, s.explain(err)
		}
		if err := rows.Err(); err != nil {
			return nil, s.explain(err)
		}
		// The members of the items found, through the same lookup: an
		// item found in an earlier chunk has its members already. The
		// items are found first and their members read once each: joining
		// every member found to all of its item's members read an item of
		// n members n times over (1,200 members: 1.4 million rows).
		rows, err = s.db.QueryContext(ctx, `SELECT all_m.batch_id, all_m.custom_id, all_m.pos, all_m.member
			FROM batch_members all_m
			WHERE (all_m.batch_id, all_m.custom_id) IN (SELECT m.batch_id, m.custom_id FROM batch_members m WHERE `+in+`)
			ORDER BY all_m.batch_id, all_m.custom_id, all_m.pos`, args...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			var k itemKey
			var pos int
			var member string
			if err := rows.Scan(&k.batchID, &k.customID, &pos, &member); err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			if fresh[k] {
				it := items[k]
				it.Members = append(it.Members, member)
				items[k] = it
			}
		}
		if err := rows.Close(); err != nil {
			return nil, s.explain(err)
		}
		if err := rows.Err(); err != nil {
			return nil, s.explain(err)
		}
	}
	found := make(map[string]store.BatchItem, len(picked))
	for member, p := range picked {
		it := items[p.item]
		it.Members = slices.Clone(it.Members)
		found[member] = it
	}
	return found, nil
}

type itemKey struct{ batchID, customID string }

// SaveBatchResults stores results of a batch's items in one transaction.
// The request of an item whose result is stored (Done) is dropped: the
// answer, or the error, is what is kept. A result for an item the batch
// does not hold stores nothing and is an error: the results are of another
// batch.
func (s *DB) SaveBatchResults(ctx context.Context, batchID string, results []store.BatchItem) error {
	if len(results) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `UPDATE batch_items SET done = ?, answer = ?, input_tokens = ?, output_tokens = ?, finish = ?, cache_read_tokens = ?, cache_write_tokens = ?, error = ?,
		request = CASE WHEN ? THEN NULL ELSE request END
		WHERE batch_id = ? AND custom_id = ?`)
	if err != nil {
		return s.explain(err)
	}
	defer stmt.Close()
	for _, r := range results {
		res, err := stmt.ExecContext(ctx, r.Done, r.Answer, r.InputTokens, r.OutputTokens, r.Finish, r.CacheReadTokens, r.CacheWriteTokens, r.Error, r.Done, batchID, r.CustomID)
		if err != nil {
			return s.explain(err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return s.explain(err)
		} else if n == 0 {
			return fmt.Errorf("database %s: batch %s has no item %q; none of its %d results were stored. Try: check that the results file is the batch's own", s.name, batchID, r.CustomID, len(results))
		}
	}
	if err := tx.Commit(); err != nil {
		return s.explain(err)
	}
	return nil
}
