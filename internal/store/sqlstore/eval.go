package sqlstore

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// payloadHash names a payload by its content.
func payloadHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Payloads are compressed and read back one per result: a gzip writer's
// compressor state is most of a megabyte and a reader's window 40 KB, so
// made afresh each time they were 14 GB of garbage in a 10,000-item eval
// and set its heap's peak. Pooled, they are made about once per goroutine.
var (
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	gzipReaders sync.Pool // of *gzip.Reader, made by the first gunzip
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	gzipWriters.Put(w)
	return buf.Bytes()
}

func gunzip(b []byte) ([]byte, error) {
	r, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(b))
	} else {
		err = r.Reset(bytes.NewReader(b))
	}
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(r)
	gzipReaders.Put(r)
	return out, err
}

// EvalResults returns the stored results among keys.
func (s *DB) EvalResults(ctx context.Context, keys []string) (map[string]store.EvalResult, error) {
	found := make(map[string]store.EvalResult, len(keys))
	for start := 0; start < len(keys); start += lookupChunk {
		chunk := keys[start:min(start+lookupChunk, len(keys))]
		args := make([]any, len(chunk))
		for i, k := range chunk {
			args[i] = k
		}
		rows, err := s.db.QueryContext(ctx, `SELECT r.key, r.model, r.latency_ms, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens, r.cost_usd, r.finish, p.gz
			FROM eval_results r JOIN payloads p ON p.hash = r.response
			WHERE r.key IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			var r store.EvalResult
			var body []byte
			if err := rows.Scan(&r.Key, &r.Model, &r.LatencyMS, &r.InputTokens, &r.OutputTokens, &r.CacheReadTokens, &r.CacheWriteTokens, &r.CostUSD, &r.Finish, &body); err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			answer, err := gunzip(body)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("database %s: answer of %s is unreadable: %w", s.name, r.Key, err)
			}
			r.Answer = string(answer)
			found[r.Key] = r
		}
		if err := rows.Close(); err != nil {
			return nil, s.explain(err)
		}
	}
	return found, nil
}

// StartRun records a new run.
func (s *DB) StartRun(ctx context.Context, r store.EvalRun) error {
	models, _ := json.Marshal(r.Models)
	params, _ := json.Marshal(r.Params)
	_, err := s.db.ExecContext(ctx, `INSERT INTO eval_runs(id, dataset, models, params, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.ID, r.Dataset, string(models), string(params), s.timeArg(r.CreatedAt, sortableTime))
	if err != nil {
		return s.explain(err)
	}
	return nil
}

// FinishRun marks a run complete, with what its judge was paid.
func (s *DB) FinishRun(ctx context.Context, id string, at time.Time, judge *store.RunJudge) error {
	var model, verdicts, cost any
	if judge != nil {
		model, verdicts = judge.Model, judge.Verdicts
		if judge.CostUSD != nil {
			cost = *judge.CostUSD
		}
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE eval_runs SET finished_at = ?, judge_model = ?, judge_verdicts = ?, judge_cost_usd = ? WHERE id = ?`,
		s.timeArg(at, sortableTime), model, verdicts, cost, id); err != nil {
		return s.explain(err)
	}
	return nil
}

// SaveEvalResult stores a paid answer the moment it arrives, before it is
// scored: a run stopped while scoring never pays for it again. A grading
// model's verdicts are stored this way too.
func (s *DB) SaveEvalResult(ctx context.Context, r store.EvalResult) error {
	return s.SaveEval(ctx, store.EvalWrite{Answers: []store.EvalResult{r}})
}

// SaveRunResults records how answers scored in a run, in one transaction:
// a cached rerun is bound by the lookups, not by a commit per item.
func (s *DB) SaveRunResults(ctx context.Context, rrs []store.RunResult) error {
	return s.SaveEval(ctx, store.EvalWrite{Rows: rrs})
}

// SaveEval stores a run's answers and rows and gives back the leases they
// answer, in one transaction of a few statements: each table takes its
// rows in statements of evalChunk, so that a batch of answers costs a
// server about the round trips one answer did. Rows go in key order, so
// that two processes storing the same payloads at once take their locks in
// the same order, never in a circle.
func (s *DB) SaveEval(ctx context.Context, w store.EvalWrite) error {
	if len(w.Answers)+len(w.Rows)+len(w.Release) == 0 {
		return nil
	}
	// Compressed before the transaction begins: on SQLite it holds the
	// database's one write lock.
	payloads := map[string][]byte{}
	bodies := map[string][]byte{} // for the object store, by hash
	payload := func(body []byte, request bool) string {
		h := payloadHash(body)
		if _, ok := payloads[h]; !ok {
			payloads[h] = gz(s.kept(body, request))
			bodies[h] = body
		}
		return h
	}
	type answer struct {
		store.EvalResult
		request, response string
	}
	answers := map[string]answer{}
	for _, a := range w.Answers {
		if _, ok := answers[a.Key]; !ok { // the first stored for a key wins, as in the table
			answers[a.Key] = answer{a, payload(a.Request, true), payload([]byte(a.Answer), false)}
		}
	}
	type row struct {
		store.RunResult
		request *string
	}
	type place struct {
		run, model   string
		line, repeat int
	}
	rows := map[place]row{}
	for _, rr := range w.Rows {
		r := row{RunResult: rr}
		if rr.Error != "" && rr.Request != nil {
			h := payload(rr.Request, true)
			r.request = &h
		}
		rows[place{rr.RunID, rr.Model, rr.Line, rr.Repeat}] = r // the last written for a place wins, as in the table
	}

	// Written to the object store before the rows naming them commit.
	uris, err := s.putPayloads(ctx, bodies)
	if err != nil {
		return err
	}

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	for chunk := range slices.Chunk(slices.Sorted(maps.Keys(payloads)), evalChunk) {
		args := make([]any, 0, 3*len(chunk))
		for _, h := range chunk {
			args = append(args, h, payloads[h], uris[h])
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO payloads(hash, gz, uri) VALUES `+repeatList("(?, ?, ?)", len(chunk))+` ON CONFLICT DO NOTHING`, args...); err != nil {
			return s.explain(err)
		}
	}
	created := s.timeArg(time.Now(), time.RFC3339Nano)
	for chunk := range slices.Chunk(slices.Sorted(maps.Keys(answers)), evalChunk) {
		args := make([]any, 0, 12*len(chunk))
		for _, k := range chunk {
			a := answers[k]
			args = append(args, a.Key, a.Model, a.LatencyMS, a.InputTokens, a.OutputTokens, a.CacheReadTokens, a.CacheWriteTokens, a.CostUSD, a.Finish,
				a.request, a.response, created)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO eval_results(key, model, latency_ms, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, finish, request, response, created_at)
			VALUES `+repeatList("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", len(chunk))+` ON CONFLICT DO NOTHING`, args...); err != nil {
			return s.explain(err)
		}
	}
	places := slices.SortedFunc(maps.Keys(rows), func(a, b place) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.model, b.model), cmp.Compare(a.line, b.line), cmp.Compare(a.repeat, b.repeat))
	})
	for chunk := range slices.Chunk(places, evalChunk) {
		args := make([]any, 0, 13*len(chunk))
		for _, p := range chunk {
			rr := rows[p]
			reasons, _ := json.Marshal(nonNil(rr.Reasons))
			expected, _ := json.Marshal(nonNil(rr.Expected))
			args = append(args, rr.RunID, rr.Model, rr.Item, rr.Line, rr.Repeat, rr.Key, rr.Pass, rr.Score,
				string(reasons), string(expected), rr.Error, rr.Cached, rr.request)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO eval_run_results(run_id, model, item, line, repeat, key, pass, score, reasons, expected, error, cached, request)
			VALUES `+repeatList("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", len(chunk))+`
			ON CONFLICT(run_id, model, line, repeat) DO UPDATE SET item = excluded.item, key = excluded.key, pass = excluded.pass, score = excluded.score,
				reasons = excluded.reasons, expected = excluded.expected, error = excluded.error, cached = excluded.cached, request = excluded.request`, args...); err != nil {
			return s.explain(err)
		}
		metrics := make([]store.RunResult, len(chunk))
		for i, p := range chunk {
			metrics[i] = rows[p].RunResult
		}
		if err := s.saveMetrics(ctx, tx, metrics); err != nil {
			return err
		}
	}
	for chunk := range slices.Chunk(slices.Sorted(slices.Values(w.Release)), leaseChunk) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE owner = ? AND key IN (`+repeatList("?", len(chunk))+`)`,
			append([]any{w.Owner}, anys(chunk)...)...); err != nil {
			return s.explain(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.explain(err)
	}
	return nil
}

// evalChunk is how many rows one statement of SaveEval writes at most:
// thirteen parameters each, well under every database's limit.
const evalChunk = 200

// saveMetrics replaces the per-metric grades of rrs's results (sorted by
// place, as SaveEval writes them) with theirs: a row per named metric, pos
// keeping their order, and none for a result whose assertions name no
// metric (its pass and score are then its one metric, accuracy, which
// digest_eval_scores shows as such). A metric named twice keeps its first
// grade. A result written again (the last written for a place wins) loses
// the grades it had: each run and model's lines in rrs are first looked
// up as a range of the primary key, and the places are deleted only when
// that range holds grades, so that a run's first write of its results,
// every write but a rewrite, pays one index probe for it.
func (s *DB) saveMetrics(ctx context.Context, tx *txn, rrs []store.RunResult) error {
	type span struct {
		run, model string
		low, high  int
		places     []any
	}
	var spans []*span
	var ins []any
	for _, rr := range rrs {
		if n := len(spans); n == 0 || spans[n-1].run != rr.RunID || spans[n-1].model != rr.Model {
			spans = append(spans, &span{run: rr.RunID, model: rr.Model, low: rr.Line, high: rr.Line})
		}
		sp := spans[len(spans)-1]
		sp.low, sp.high = min(sp.low, rr.Line), max(sp.high, rr.Line)
		sp.places = append(sp.places, rr.RunID, rr.Model, rr.Line, rr.Repeat)
		seen := make(map[string]bool, len(rr.Metrics))
		for _, m := range rr.Metrics {
			if seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			ins = append(ins, rr.RunID, rr.Model, rr.Line, rr.Repeat, len(seen)-1, m.Name, m.Score, m.Pass)
		}
	}
	for _, sp := range spans {
		var graded int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM eval_result_metrics
			WHERE run_id = ? AND model = ? AND line >= ? AND line <= ? LIMIT 1) g`, sp.run, sp.model, sp.low, sp.high).Scan(&graded)
		if err != nil {
			return s.explain(err)
		}
		if graded == 0 {
			continue
		}
		n := len(sp.places) / 4
		if _, err := tx.ExecContext(ctx, `DELETE FROM eval_result_metrics WHERE `+
			strings.Repeat("(run_id = ? AND model = ? AND line = ? AND repeat = ?) OR ", n-1)+
			`(run_id = ? AND model = ? AND line = ? AND repeat = ?)`, sp.places...); err != nil {
			return s.explain(err)
		}
	}
	const cols = 8
	for chunk := range slices.Chunk(ins, cols*evalChunk) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO eval_result_metrics(run_id, model, line, repeat, pos, metric, score, pass)
			VALUES `+repeatList("(?, ?, ?, ?, ?, ?, ?, ?)", len(chunk)/cols)+`
			ON CONFLICT(run_id, model, line, repeat, pos) DO UPDATE SET metric = excluded.metric, score = excluded.score, pass = excluded.pass`, chunk...); err != nil {
			return s.explain(err)
		}
	}
	return nil
}

// Runs lists past runs, newest first.
func (s *DB) Runs(ctx context.Context) ([]store.EvalRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM eval_runs ORDER BY created_at DESC`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []store.EvalRun
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, s.explain(err)
		}
		out = append(out, r)
	}
	return out, s.explain(rows.Err())
}

// Run returns one run, found by its id or a unique prefix of it.
func (s *DB) Run(ctx context.Context, id string) (store.EvalRun, bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM eval_runs
		WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id = ? DESC LIMIT 2`, id, likePrefix(id), id)
	if err != nil {
		return store.EvalRun{}, false, s.explain(err)
	}
	defer rows.Close()
	var found []store.EvalRun
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return store.EvalRun{}, false, s.explain(err)
		}
		found = append(found, r)
	}
	if len(found) == 0 || len(found) > 1 && found[0].ID != id {
		return store.EvalRun{}, false, s.explain(rows.Err())
	}
	return found[0], true, s.explain(rows.Err())
}

// runColumns are what scanRun reads.
const runColumns = `id, dataset, models, params, created_at, finished_at, judge_model, judge_verdicts, judge_cost_usd`

func scanRun(rows *sql.Rows) (store.EvalRun, error) {
	var r store.EvalRun
	var models, params string
	var created, finished dbTime
	var judge sql.NullString
	var verdicts sql.NullInt64
	var cost sql.NullFloat64
	if err := rows.Scan(&r.ID, &r.Dataset, &models, &params, &created, &finished, &judge, &verdicts, &cost); err != nil {
		return r, err
	}
	if judge.Valid {
		r.Judge = &store.RunJudge{Model: judge.String, Verdicts: int(verdicts.Int64)}
		if cost.Valid {
			r.Judge.CostUSD = &cost.Float64
		}
	}
	json.Unmarshal([]byte(models), &r.Models)
	json.Unmarshal([]byte(params), &r.Params)
	r.CreatedAt, r.FinishedAt = created.Time, finished.Time
	return r, nil
}

// RunRows streams a run's results, model by model in the order given,
// then by line and repeat, each with its per-metric grades in the order
// they were stored. Answers are read only when withBodies is set.
//
// Results are read a page at a time, each page's grades (when the model has
// any in the run) by a second query over its lines: both are range scans of
// a primary key, whatever the planner knows of the tables. (A join of the
// two, planned before PostgreSQL had analyzed a run just written, compared
// every result with every grade: over a minute for 10,000 results.)
func (s *DB) RunRows(ctx context.Context, runID string, models []string, withBodies bool) iter.Seq2[store.RunRow, error] {
	return func(yield func(store.RunRow, error) bool) {
		bodies, page := "NULL, NULL", runRowsPage
		if withBodies {
			bodies, page = "pa.gz, pq.gz", runRowsPage/10
		}
		for _, model := range models {
			var graded int
			if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM eval_result_metrics WHERE run_id = ? AND model = ? LIMIT 1) g`,
				runID, model).Scan(&graded); err != nil {
				yield(store.RunRow{}, s.explain(err))
				return
			}
			var last *store.RunRow
			for {
				rows, err := s.runRowsPage(ctx, runID, model, bodies, last, page, graded > 0)
				if err != nil {
					yield(store.RunRow{}, err)
					return
				}
				for i := range rows {
					if !yield(rows[i], nil) {
						return
					}
				}
				if len(rows) < page {
					break
				}
				last = &rows[len(rows)-1]
			}
		}
	}
}

// runRowsPage is how many results RunRows reads at a time without their
// bodies; a tenth of it with them.
const runRowsPage = 5000

// runRowsPage reads up to limit of a model's results after last (from the
// first when nil), with their grades when graded.
func (s *DB) runRowsPage(ctx context.Context, runID, model, bodies string, last *store.RunRow, limit int, graded bool) ([]store.RunRow, error) {
	after, args := "", []any{runID, model}
	if last != nil {
		after = ` AND rr.line >= ? AND (rr.line > ? OR rr.repeat > ?)`
		args = append(args, last.Line, last.Line, last.Repeat)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rr.model, rr.item, rr.line, rr.repeat, rr.key, rr.pass, rr.score, rr.reasons, rr.expected, rr.error, rr.cached,
		COALESCE(r.latency_ms, 0), COALESCE(r.input_tokens, 0), COALESCE(r.cache_read_tokens, 0), COALESCE(r.output_tokens, 0), COALESCE(r.cost_usd, 0),
		COALESCE(r.finish, ''), `+bodies+`
		FROM eval_run_results rr
		LEFT JOIN eval_results r ON r.key = rr.key
		LEFT JOIN payloads pa ON pa.hash = r.response
		LEFT JOIN payloads pq ON pq.hash = COALESCE(r.request, rr.request)
		WHERE rr.run_id = ? AND rr.model = ?`+after+` ORDER BY rr.line, rr.repeat LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, s.explain(err)
	}
	var out []store.RunRow
	for rows.Next() {
		var row store.RunRow
		var reasons, expected string
		var answer, request []byte
		row.RunID = runID
		if err := rows.Scan(&row.Model, &row.Item, &row.Line, &row.Repeat, &row.Key, &row.Pass, &row.Score, &reasons, &expected, &row.Error, &row.Cached,
			&row.LatencyMS, &row.InputTokens, &row.CacheReadTokens, &row.OutputTokens, &row.CostUSD, &row.Finish, &answer, &request); err != nil {
			rows.Close()
			return nil, s.explain(err)
		}
		json.Unmarshal([]byte(reasons), &row.Reasons)
		json.Unmarshal([]byte(expected), &row.Expected)
		if answer != nil {
			a, _ := gunzip(answer)
			row.Answer = string(a)
		}
		if request != nil {
			row.Request, _ = gunzip(request)
		}
		out = append(out, row)
	}
	if err := rows.Close(); err != nil {
		return nil, s.explain(err)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	if len(out) == 0 || !graded {
		return out, nil
	}
	// The grades of the page's lines, in the same order: a merge.
	grades, err := s.db.QueryContext(ctx, `SELECT line, repeat, metric, pass, score FROM eval_result_metrics
		WHERE run_id = ? AND model = ? AND line >= ? AND line <= ? ORDER BY line, repeat, pos`, runID, model, out[0].Line, out[len(out)-1].Line)
	if err != nil {
		return nil, s.explain(err)
	}
	i := 0
	for grades.Next() {
		var line, repeat int
		var m store.MetricScore
		if err := grades.Scan(&line, &repeat, &m.Name, &m.Pass, &m.Score); err != nil {
			grades.Close()
			return nil, s.explain(err)
		}
		for i < len(out) && (out[i].Line < line || out[i].Line == line && out[i].Repeat < repeat) {
			i++
		}
		if i < len(out) && out[i].Line == line && out[i].Repeat == repeat {
			out[i].Metrics = append(out[i].Metrics, m)
		}
	}
	if err := grades.Close(); err != nil {
		return nil, s.explain(err)
	}
	return out, s.explain(grades.Err())
}

// RunTotals aggregates a model's results in SQL, never loading them.
func (s *DB) RunTotals(ctx context.Context, runID, model string) (store.ModelTotals, error) {
	var t store.ModelTotals
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN rr.pass THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN rr.error <> '' THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN rr.cached THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(r.input_tokens), 0), COALESCE(SUM(r.output_tokens), 0), COALESCE(SUM(r.cost_usd), 0), COUNT(r.key),
		COUNT(DISTINCT rr.line), COUNT(DISTINCT rr.item), COALESCE(SUM(r.cache_read_tokens), 0),
		COALESCE(SUM(CASE WHEN rr.error = '' AND r.finish = 'refusal' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN rr.error = '' AND r.finish IN ('length', 'content_filter') THEN 1 ELSE 0 END), 0)
		FROM eval_run_results rr LEFT JOIN eval_results r ON r.key = rr.key
		WHERE rr.run_id = ? AND rr.model = ?`, runID, model).Scan(
		&t.Items, &t.Passed, &t.Errors, &t.Cached, &t.InputTokens, &t.OutputTokens, &t.CostUSD, &t.Answered, &t.Lines, &t.IDs,
		&t.CacheReadTokens, &t.Refused, &t.Cut)
	if err != nil {
		return t, s.explain(err)
	}
	return t, nil
}

// LatencyAt returns the latency at rank i (0-based, ascending) of a
// model's answered results: percentiles without loading every latency.
func (s *DB) LatencyAt(ctx context.Context, runID, model string, i int) (float64, error) {
	var v float64
	err := s.db.QueryRowContext(ctx, `SELECT r.latency_ms FROM eval_run_results rr JOIN eval_results r ON r.key = rr.key
		WHERE rr.run_id = ? AND rr.model = ? ORDER BY r.latency_ms LIMIT 1 OFFSET ?`, runID, model, i).Scan(&v)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, s.explain(err)
	}
	return v, nil
}

// PairCounts compares two models on the items and repeats both answered in
// a run: how often only a passed, only b, both and neither.
func (s *DB) PairCounts(ctx context.Context, runID, a, b string) (aOnly, bOnly, both, neither int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN x.pass AND NOT y.pass THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN NOT x.pass AND y.pass THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN x.pass AND y.pass THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN NOT x.pass AND NOT y.pass THEN 1 ELSE 0 END), 0)
		FROM eval_run_results x JOIN eval_run_results y
		ON y.run_id = x.run_id AND y.line = x.line AND y.repeat = x.repeat
		WHERE x.run_id = ? AND x.model = ? AND y.model = ?`, runID, a, b).Scan(&aOnly, &bOnly, &both, &neither)
	if err != nil {
		err = s.explain(err)
	}
	return
}

// DropRunIfEmpty deletes a run that stored no result, such as one stopped
// by a dataset's first line: it would only clutter runs list.
func (s *DB) DropRunIfEmpty(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM eval_runs WHERE id = ?
		AND NOT EXISTS (SELECT 1 FROM eval_run_results WHERE run_id = ?)`, id, id)
	if err != nil {
		return s.explain(err)
	}
	return nil
}

// likePrefix is a LIKE pattern matching what starts with prefix, its own
// wildcards taken literally.
func likePrefix(prefix string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(prefix) + "%"
}
