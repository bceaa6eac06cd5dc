package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// pruneChunk bounds the rows (results and their per-metric grades) one
// transaction of PruneRuns deletes:
// on SQLite a transaction holds the one write lock every process shares,
// and 10,000 rows take about 0.12 s, well inside another process's busy
// timeout (BenchmarkPruneRuns).
var pruneChunk = 10000

// PruneRuns removes the runs p selects, oldest first, each with its result
// rows and their per-metric grades (eval_result_metrics). Answers
// (eval_results), the payloads they and other runs' rows name, and
// summaries are never touched. A run with more result rows than pruneChunk
// is removed in several transactions, its run row in the last: an
// interrupted prune leaves that run listed with part of its results, and
// the next prune selects it again.
//
// The request payloads a removed run's failed results named are left: they
// are content-addressed, so a rerun adds no new ones, and deleting one
// would make the database look up every answer that might name it (none
// of those columns is indexed: a thousand took minutes at 200,000 answers).
func (s *DB) PruneRuns(ctx context.Context, p store.RunPrune) (store.Pruned, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return store.Pruned{}, err
	}
	var out store.Pruned
	var doomed []store.EvalRun
	seen := map[string]int{} // runs of each dataset met so far, newest first
	for _, r := range runs {
		seen[r.Dataset]++
		switch {
		case p.Keep >= 0 && seen[r.Dataset] <= p.Keep, !p.Before.IsZero() && !r.CreatedAt.Before(p.Before):
			out.Kept++
		case r.FinishedAt.IsZero() && (p.UnfinishedBefore.IsZero() || !r.CreatedAt.Before(p.UnfinishedBefore)):
			out.Kept++
			out.Unfinished++
		default:
			doomed = append(doomed, r)
		}
	}
	// Oldest first: an interrupted prune has removed the oldest.
	for _, r := range slices.Backward(doomed) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		n, err := s.pruneRun(ctx, r.ID, p.DryRun)
		out.Results += n
		if err != nil {
			return out, err
		}
		out.IDs = append(out.IDs, r.ID)
	}
	slices.Reverse(out.IDs)
	return out, nil
}

// pruneRun deletes one run, its result rows and their grades, and says how
// many result rows there were; with dryRun it only counts them.
func (s *DB) pruneRun(ctx context.Context, id string, dryRun bool) (int, error) {
	type span struct {
		model     string
		low, high int // lines
		rows      int // results
		graded    int // their metric rows
	}
	rows, err := s.db.QueryContext(ctx, `SELECT model, MIN(line), MAX(line), COUNT(*) FROM eval_run_results WHERE run_id = ? GROUP BY model`, id)
	if err != nil {
		return 0, s.explain(err)
	}
	var spans []span
	total := 0
	for rows.Next() {
		var sp span
		if err := rows.Scan(&sp.model, &sp.low, &sp.high, &sp.rows); err != nil {
			rows.Close()
			return 0, s.explain(err)
		}
		spans = append(spans, sp)
		total += sp.rows
	}
	if err := rows.Close(); err != nil {
		return 0, s.explain(err)
	}
	if dryRun {
		return total, nil
	}
	graded := 0
	for i := range spans {
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM eval_result_metrics WHERE run_id = ? AND model = ?`, id, spans[i].model).Scan(&spans[i].graded); err != nil {
			return 0, s.explain(err)
		}
		graded += spans[i].graded
	}
	deleted := 0
	if total+graded > pruneChunk {
		// Windows of lines holding about pruneChunk rows each (a line
		// holds a row per repeat, and one per metric of each), by the
		// primary keys (run_id, model, line, ...).
		for _, sp := range spans {
			window := lineWindow(sp.low, sp.high, sp.rows+sp.graded, pruneChunk)
			for low := sp.low; low <= sp.high; low += window {
				n, err := s.deleteIn(ctx, `run_id = ? AND model = ? AND line >= ? AND line < ?`, id, sp.model, low, low+window)
				deleted += n
				if err != nil {
					return deleted, err
				}
			}
		}
	}
	started := time.Now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return deleted, s.explain(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM eval_result_metrics WHERE run_id = ?`, id); err != nil {
		return deleted, s.explain(err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM eval_run_results WHERE run_id = ?`, id)
	if err != nil {
		return deleted, s.explain(err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `DELETE FROM eval_runs WHERE id = ?`, id); err != nil {
		return deleted, s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		return deleted, s.explain(err)
	}
	yield(ctx, time.Since(started))
	return deleted + int(n), nil
}

// lineWindow is how many lines from low to high hold about chunk of the
// rows, spread evenly; at least 1.
func lineWindow(low, high, rows, chunk int) int {
	lines := int64(high) - int64(low) + 1
	return int(max(1, min(lines, lines*int64(chunk)/int64(cmp.Or(rows, 1)))))
}

// deleteIn deletes the result rows where holds, and their grades, in a
// transaction of its own, counts the result rows removed, then waits as
// long as it took (see yield).
func (s *DB) deleteIn(ctx context.Context, where string, args ...any) (int, error) {
	started := time.Now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.explain(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM eval_result_metrics WHERE `+where, args...); err != nil {
		return 0, s.explain(err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM eval_run_results WHERE `+where, args...)
	if err != nil {
		return 0, s.explain(err)
	}
	n, _ := res.RowsAffected()
	if err := tx.Commit(); err != nil {
		return 0, s.explain(err)
	}
	yield(ctx, time.Since(started))
	return int(n), nil
}

// yield waits as long as a transaction of PruneRuns held the database,
// so that other writers get in between two: on SQLite a writer waiting
// for the lock looks again every 100 ms at most, and a prune that went
// straight on to its next transaction kept one waiting for over 800 ms.
func yield(ctx context.Context, held time.Duration) {
	t := time.NewTimer(held)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
