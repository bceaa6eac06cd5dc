package postgres

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/store/sqlstore"
)

// TestTimestampsMigrationKeepsTheData: a database of version 11, whose
// times are RFC 3339 text and costs doubles, as every earlier digest
// wrote them, comes out of version 12 with timestamptz and numeric columns
// holding the same instants (to the microsecond) and amounts, read back
// through the store as before.
func TestTimestampsMigrationKeepsTheData(t *testing.T) {
	url := pgtest.FreshDatabase(t)
	ctx := context.Background()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v11 := Dialect
	v11.Migrations = migrations[:12]
	if _, err := sqlstore.New(ctx, db, "v11", v11); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO repositories VALUES ('r', 'root', '/src/r', '2026-12-01T10:00:00.123456789Z', '2026-12-01T10:00:00.5Z')`,
		`INSERT INTO commits VALUES ('r', 'c1', 'Ada', 'ada@example.com', '2024-01-02T03:04:05+02:00', '2024-01-02T03:04:06+02:00', 'subject')`,
		`INSERT INTO summaries(repo_id, commit_hash, model, prompt_version, scope, summary, input_tokens, output_tokens, cost_usd,
			diff_tokens, truncated, skipped_files, created_at) VALUES ('r', 'c1', 'm', 'p', '', 'text', 1, 2, 0.1, 3, false, '[]', '2024-05-06T05:08:09.123456789Z')`,
		`INSERT INTO payloads(hash, gz) VALUES ('h', '\x00')`,
		`INSERT INTO eval_results(key, model, latency_ms, input_tokens, output_tokens, cost_usd, request, response, created_at)
			VALUES ('k', 'm', 1, 2, 3, 0.0002, 'h', 'h', '2026-12-01T10:00:01.25Z')`,
		`INSERT INTO eval_runs(id, dataset, models, params, created_at, finished_at, judge_model, judge_verdicts, judge_cost_usd)
			VALUES ('run1', 'd', '[]', '{}', '2026-12-01T10:00:00.000000000Z', '2026-12-01T10:05:00.500000000Z', 'j', 2, 0.3)`,
		`INSERT INTO eval_runs(id, dataset, models, params, created_at) VALUES ('run2', 'd', '[]', '{}', '2026-12-01T11:00:00.000000000Z')`,
		`INSERT INTO batches(id, model, base_url, status, items, succeeded, errored, canceled, expired, message, collected, created_at, updated_at)
			VALUES ('b', 'm', '', 'creating', 0, 0, 0, 0, 0, '', false, '2026-11-30T05:08:09.123456789Z', '2026-11-30T05:09:00.000000000Z')`,
		`INSERT INTO token_factors VALUES ('m', 1.5, 3, '2026-12-01T10:00:00Z')`,
		`INSERT INTO forge_answers VALUES ('f', '\x00', 0, '2026-12-01T10:00:00Z')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var texts, doubles int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE data_type = 'text' AND (column_name LIKE '%\_at' OR column_name LIKE '%\_date')),
		count(*) FILTER (WHERE data_type = 'double precision' AND column_name LIKE '%cost%')
		FROM information_schema.columns WHERE table_schema = current_schema() AND table_name NOT LIKE 'digest\_%'`).Scan(&texts, &doubles); err != nil {
		t.Fatal(err)
	}
	if texts != 0 || doubles != 0 {
		t.Errorf("after version 12, %d time columns are text and %d cost columns double precision; want none", texts, doubles)
	}

	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "run2" || !runs[0].FinishedAt.IsZero() ||
		!runs[1].CreatedAt.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) ||
		!runs[1].FinishedAt.Equal(time.Date(2026, 12, 1, 10, 5, 0, 500e6, time.UTC)) ||
		runs[1].Judge == nil || runs[1].Judge.CostUSD == nil || *runs[1].Judge.CostUSD != 0.3 {
		t.Errorf("runs after the migration: %+v", runs)
	}
	sums, err := s.Summaries(ctx, "r", "m", "p", "", []string{"c1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sums["c1"]; got.CostUSD != 0.1 || !got.CreatedAt.Equal(time.Date(2024, 5, 6, 5, 8, 9, 123457000, time.UTC)) {
		t.Errorf("summary after the migration: cost %v at %v; want 0.1 at 05:08:09.123457 (rounded to the microsecond)", got.CostUSD, got.CreatedAt)
	}
	batches, err := s.Batches(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || !batches[0].CreatedAt.Equal(time.Date(2026, 11, 30, 5, 8, 9, 123457000, time.UTC)) ||
		!batches[0].UpdatedAt.Equal(time.Date(2026, 11, 30, 5, 9, 0, 0, time.UTC)) {
		t.Errorf("batches after the migration: %+v", batches)
	}
	var authored time.Time
	var cost string
	if err := db.QueryRowContext(ctx, `SELECT c.author_date, r.cost_usd::text FROM commits c, eval_results r`).Scan(&authored, &cost); err != nil {
		t.Fatal(err)
	}
	if !authored.Equal(time.Date(2024, 1, 2, 1, 4, 5, 0, time.UTC)) || cost != "0.0002" {
		t.Errorf("author_date %v and cost %s, want 01:04:05 UTC and 0.0002", authored, cost)
	}
}
