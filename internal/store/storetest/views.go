package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/help"
	"github.com/digest-cli/digest/internal/store"
)

// A type class of a view's column: what a query may count on whatever
// the database, each backend's types being its own.
const (
	classText    = "text"    // text; SQLite TEXT
	classInteger = "integer" // bigint; SQLite INTEGER
	classDecimal = "decimal" // numeric; SQLite REAL
	classFloat   = "float"   // double precision; SQLite REAL
	classBool    = "boolean" // boolean; SQLite INTEGER 0 or 1
	classTime    = "time"    // timestamptz; SQLite TEXT 'YYYY-MM-DDTHH:MM:SS.SSSZ'
)

type viewColumn struct{ name, class string }

// promisedViews are the views' columns, in order, as the manual (digest
// help caching) promises them: a migration may add columns after them, never drop, rename,
// reorder or retype one.
var promisedViews = map[string][]viewColumn{
	"digest_commit_summaries": {
		{"repository_id", classText}, {"repository_path", classText}, {"commit_hash", classText},
		{"subject", classText}, {"author_name", classText}, {"author_email", classText},
		{"authored_at", classTime}, {"committed_at", classTime},
		{"model", classText}, {"prompt_version", classText}, {"scope", classText},
		{"summary", classText}, {"change_type", classText}, {"change_scope", classText},
		{"breaking", classBool}, {"partial", classBool}, {"truncated", classBool},
		{"input_tokens", classInteger}, {"output_tokens", classInteger}, {"diff_tokens", classInteger},
		{"cost_usd", classDecimal}, {"summarized_at", classTime},
	},
	"digest_eval_scores": {
		{"run_id", classText}, {"run_started_at", classTime}, {"run_finished_at", classTime},
		{"dataset", classText}, {"model", classText}, {"line", classInteger}, {"item_id", classText},
		{"repeat", classInteger}, {"metric", classText}, {"score", classFloat}, {"pass", classBool},
		{"error", classText}, {"cached", classBool}, {"latency_ms", classFloat},
		{"input_tokens", classInteger}, {"output_tokens", classInteger}, {"cost_usd", classDecimal},
	},
}

// postgresTypes are the information_schema data types of each class.
var postgresTypes = map[string][]string{
	classText:    {"text"},
	classInteger: {"bigint", "integer"},
	classDecimal: {"numeric"},
	classFloat:   {"double precision"},
	classBool:    {"boolean"},
	classTime:    {"timestamp with time zone"},
}

// sqliteTime is how the SQLite views write a time.
var sqliteTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// queryNames are the manual's three queries, in the order its page on the
// cache gives them.
var queryNames = []string{"cost per repository per week", "models ranked by each metric in the last run", "commits summarized per day"}

// sqlBlock is a fenced SQL block of a page.
var sqlBlock = regexp.MustCompile("(?s)```sql\n(.*?)```")

// manualQueries reads the three queries from `digest help caching`
// ("Three queries"), as a reader copies them, per dialect: a block headed
// `-- PostgreSQL` or `-- SQLite` is that database's, any other both's.
func manualQueries(t *testing.T) map[string]map[string]string {
	t.Helper()
	md, err := help.Markdown("caching")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(md, "### Three queries")
	if !ok {
		t.Fatal(`digest help caching has no "Three queries"`)
	}
	out := map[string]map[string]string{}
	i := 0
	for _, m := range sqlBlock.FindAllStringSubmatch(section, -1) {
		if i == len(queryNames) {
			break
		}
		q := out[queryNames[i]]
		if q == nil {
			q = map[string]string{}
			out[queryNames[i]] = q
		}
		body := m[1]
		switch {
		case strings.HasPrefix(body, "-- PostgreSQL\n"):
			q["postgres"] = strings.TrimPrefix(body, "-- PostgreSQL\n")
		case strings.HasPrefix(body, "-- SQLite\n"):
			q["sqlite"] = strings.TrimPrefix(body, "-- SQLite\n")
		default:
			q["postgres"], q["sqlite"] = body, body
		}
		if len(q) == 2 {
			i++
		}
	}
	if i != len(queryNames) {
		t.Fatalf("digest help caching gives %d of the %d queries in both dialects", i, len(queryNames))
	}
	return out
}

// sqlOf is the database under s, which every backend's store exposes.
func sqlOf(t *testing.T, s store.Store) *sql.DB {
	t.Helper()
	db, ok := s.(interface{ SQL() *sql.DB })
	if !ok {
		t.Fatalf("store %T does not expose its database (SQL() *sql.DB)", s)
	}
	return db.SQL()
}

// fillViews stores what the views' tests read: summaries of five commits
// in two repositories over three weeks (one commit by two models, one
// written at +02:00), and two runs, the newer one of three models graded
// on accuracy and bias but for one model whose items name no metric.
func fillViews(t *testing.T, b Backend) store.Store {
	t.Helper()
	ctx := context.Background()
	s := newStore(t, b)
	saveRepo(t, s, "repo-b", hash(99))
	for _, c := range []struct {
		repo, commit, model string
		at                  time.Time
		cost                float64
	}{
		{testRepo, hash(1), "m1", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), 0.25},
		{testRepo, hash(1), "m2", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), 0.5},
		{testRepo, hash(2), "m1", time.Date(2026, 12, 6, 23, 30, 0, 0, time.FixedZone("UTC+2", 2*3600)), 0.125},
		{testRepo, hash(4), "m1", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), 2},
		{"repo-b", hash(5), "m1", time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC), 0.5},
		{"repo-b", hash(3), "m1", time.Date(2026, 12, 7, 0, 30, 0, 0, time.UTC), 1},
	} {
		k := store.SummaryKey{RepoID: c.repo, Commit: c.commit, Model: c.model, PromptVersion: testPrompt, Scope: testScope}
		save(t, s, store.Summary{SummaryKey: k, Text: "summary of " + c.commit, InputTokens: 100, OutputTokens: 10,
			CostUSD: c.cost, CreatedAt: c.at, ChangeType: "fix", Breaking: c.commit == hash(2)})
	}

	old := store.EvalRun{ID: "run-old", Dataset: "d.jsonl", Models: []string{"m-a"}, CreatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	last := store.EvalRun{ID: "run-new", Dataset: "d.jsonl", Models: []string{"m-a", "m-b", "m-c"}, CreatedAt: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	for _, r := range []store.EvalRun{old, last} {
		if err := s.StartRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	grade := func(name string, pass bool, score float64) store.MetricScore {
		return store.MetricScore{Name: name, Pass: pass, Score: score}
	}
	var answers []store.EvalResult
	var rows []store.RunResult
	add := func(run, model string, line int, pass bool, score float64, metrics ...store.MetricScore) {
		k := fmt.Sprintf("%s/%s/%d", run, model, line)
		answers = append(answers, store.EvalResult{Key: k, Model: model, LatencyMS: 100 * float64(line), InputTokens: 10 * line,
			OutputTokens: line, CostUSD: 0.25 * float64(line), Request: []byte(`{"q":"` + k + `"}`), Answer: "answer " + k})
		rows = append(rows, store.RunResult{RunID: run, Model: model, Item: fmt.Sprintf("item-%d", line), Line: line, Key: k,
			Pass: pass, Score: score, Metrics: metrics})
	}
	add("run-old", "m-a", 1, false, 0, grade("accuracy", false, 0))
	add("run-new", "m-a", 1, true, 1, grade("accuracy", true, 1), grade("bias", true, 1))
	add("run-new", "m-a", 2, false, 0.5, grade("accuracy", false, 0.5), grade("bias", true, 1))
	add("run-new", "m-b", 1, false, 0.75, grade("accuracy", true, 1), grade("bias", false, 0.5))
	add("run-new", "m-b", 2, false, 0.5, grade("accuracy", true, 1), grade("bias", false, 0))
	add("run-new", "m-c", 1, true, 1)
	add("run-new", "m-c", 2, false, 0.5)
	// An error: no answer, so no latency, tokens or cost.
	rows = append(rows, store.RunResult{RunID: "run-new", Model: "m-c", Item: "item-3", Line: 3, Key: "unanswered", Error: "timeout", Score: 0})
	if err := s.SaveEval(ctx, store.EvalWrite{Answers: answers, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []store.EvalRun{old, last} {
		if err := s.FinishRun(ctx, r.ID, r.CreatedAt.Add(time.Minute), nil); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// testViewsKeepTheirPromisedColumns fails when a view loses a promised
// column, moves it, or changes its type class: in PostgreSQL by the
// catalog, in SQLite (whose views have no types) by the values the
// columns hold.
func testViewsKeepTheirPromisedColumns(t *testing.T, b Backend) {
	ctx := context.Background()
	db := sqlOf(t, fillViews(t, b))
	for _, view := range slices.Sorted(maps.Keys(promisedViews)) {
		want := promisedViews[view]
		t.Run(view, func(t *testing.T) {
			var names []string
			switch b.Dialect {
			case "postgres":
				rows, err := db.QueryContext(ctx, `SELECT column_name, data_type FROM information_schema.columns
					WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, view)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				for rows.Next() {
					var name, typ string
					if err := rows.Scan(&name, &typ); err != nil {
						t.Fatal(err)
					}
					if i := len(names); i < len(want) && name == want[i].name && !slices.Contains(postgresTypes[want[i].class], typ) {
						t.Errorf("%s.%s is %s, promised %s (%v)", view, name, typ, want[i].class, postgresTypes[want[i].class])
					}
					names = append(names, name)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
			case "sqlite":
				rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, view)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				for rows.Next() {
					var name string
					if err := rows.Scan(&name); err != nil {
						t.Fatal(err)
					}
					names = append(names, name)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				for _, c := range want {
					if slices.Contains(names, c.name) {
						checkSQLiteClass(t, db, view, c)
					}
				}
			default:
				t.Fatalf("Backend.Dialect is %q, want sqlite or postgres", b.Dialect)
			}
			for i, c := range want {
				if i >= len(names) || names[i] != c.name {
					t.Errorf("%s has columns %v, promised %v first", view, names, columnNames(want))
					break
				}
			}
		})
	}
}

// checkSQLiteClass checks the values of a SQLite view's column: at least
// one, and every one not NULL of its class.
func checkSQLiteClass(t *testing.T, db *sql.DB, view string, c viewColumn) {
	t.Helper()
	rows, err := db.Query(`SELECT typeof(` + c.name + `), CAST(` + c.name + ` AS TEXT) FROM ` + view + ` WHERE ` + c.name + ` IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var typ, text string
		if err := rows.Scan(&typ, &text); err != nil {
			t.Fatal(err)
		}
		n++
		ok := false
		switch c.class {
		case classText:
			ok = typ == "text"
		case classInteger:
			ok = typ == "integer"
		case classDecimal, classFloat:
			ok = typ == "real"
		case classBool:
			ok = typ == "integer" && (text == "0" || text == "1")
		case classTime:
			ok = typ == "text" && sqliteTime.MatchString(text)
		}
		if !ok {
			t.Errorf("%s.%s holds %s %q, promised %s", view, c.name, typ, text, c.class)
			return
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Errorf("%s.%s holds nothing but NULL: its class cannot be checked", view, c.name)
	}
}

func columnNames(cs []viewColumn) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

// testEvalScoresViewHasARowPerMetric reads digest_eval_scores back: a row
// per stored metric, one "accuracy" row for a result that names none, the
// answer's latency, tokens and cost on each, and NULLs for an error.
func testEvalScoresViewHasARowPerMetric(t *testing.T, b Backend) {
	db := sqlOf(t, fillViews(t, b))
	rows, err := db.Query(`SELECT run_id, model, line, item_id, metric, score, pass, error, latency_ms, input_tokens, output_tokens, cost_usd
		FROM digest_eval_scores ORDER BY run_id, model, line, metric`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var run, model, item, metric, errText string
		var line int
		var score float64
		var pass bool
		var latency, cost sql.NullFloat64
		var in, out sql.NullInt64
		if err := rows.Scan(&run, &model, &line, &item, &metric, &score, &pass, &errText, &latency, &in, &out, &cost); err != nil {
			t.Fatal(err)
		}
		answer := "no answer"
		if latency.Valid || in.Valid || out.Valid || cost.Valid {
			answer = fmt.Sprintf("%gms %d+%d $%g", latency.Float64, in.Int64, out.Int64, cost.Float64)
		}
		got = append(got, fmt.Sprintf("%s %s %d %s %s %g %v %q %s", run, model, line, item, metric, score, pass, errText, answer))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`run-new m-a 1 item-1 accuracy 1 true "" 100ms 10+1 $0.25`,
		`run-new m-a 1 item-1 bias 1 true "" 100ms 10+1 $0.25`,
		`run-new m-a 2 item-2 accuracy 0.5 false "" 200ms 20+2 $0.5`,
		`run-new m-a 2 item-2 bias 1 true "" 200ms 20+2 $0.5`,
		`run-new m-b 1 item-1 accuracy 1 true "" 100ms 10+1 $0.25`,
		`run-new m-b 1 item-1 bias 0.5 false "" 100ms 10+1 $0.25`,
		`run-new m-b 2 item-2 accuracy 1 true "" 200ms 20+2 $0.5`,
		`run-new m-b 2 item-2 bias 0 false "" 200ms 20+2 $0.5`,
		`run-new m-c 1 item-1 accuracy 1 true "" 100ms 10+1 $0.25`,
		`run-new m-c 2 item-2 accuracy 0.5 false "" 200ms 20+2 $0.5`,
		`run-new m-c 3 item-3 accuracy 0 false "timeout" no answer`,
		`run-old m-a 1 item-1 accuracy 0 false "" 100ms 10+1 $0.25`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("digest_eval_scores:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// dayOf reads a date a query returns: a time (PostgreSQL's date) or text
// (SQLite's), as YYYY-MM-DD.
type dayOf string

func (d *dayOf) Scan(v any) error {
	switch v := v.(type) {
	case time.Time:
		*d = dayOf(v.Format(time.DateOnly))
	case string:
		*d = dayOf(v)
	case []byte:
		*d = dayOf(v)
	default:
		return fmt.Errorf("a date column holds %T", v)
	}
	return nil
}

// testManualQueries runs the manual's three queries (digest help
// caching), read from its page as a reader copies them for the backend's
// dialect, over known data.
func testManualQueries(t *testing.T, b Backend) {
	queries := manualQueries(t)
	db := sqlOf(t, fillViews(t, b))
	run := func(t *testing.T, name string, scan func(*sql.Rows) (string, error)) []string {
		t.Helper()
		q, ok := queries[name][b.Dialect]
		if !ok {
			t.Fatalf("no query %q for dialect %q in digest help caching", name, b.Dialect)
		}
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			line, err := scan(rows)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(t *testing.T, name string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	name := "cost per repository per week"
	check(t, name, run(t, name, func(r *sql.Rows) (string, error) {
		var path string
		var week dayOf
		var n int
		var cost float64
		err := r.Scan(&path, &week, &n, &cost)
		return fmt.Sprintf("%s %s %d $%g", path, week, n, cost), err
	}), []string{
		"/src/repo-a 2026-11-23 1 $2",
		"/src/repo-a 2026-11-30 3 $0.875", // Sunday 23:30 at +02:00 is Sunday in UTC
		"/src/repo-b 2026-11-30 1 $0.5",
		"/src/repo-b 2026-12-07 1 $1",
	})

	name = "models ranked by each metric in the last run"
	check(t, name, run(t, name, func(r *sql.Rows) (string, error) {
		var metric, model string
		var mean, passRate float64
		var n, rank int
		err := r.Scan(&metric, &model, &mean, &passRate, &n, &rank)
		return fmt.Sprintf("%s #%d %s mean %g pass %g of %d", metric, rank, model, mean, passRate, n), err
	}), []string{
		"accuracy #1 m-b mean 1 pass 1 of 2",
		"accuracy #2 m-a mean 0.75 pass 0.5 of 2",
		"accuracy #3 m-c mean 0.5 pass 0.3333333333333333 of 3", // its error counts, as a 0
		"bias #1 m-a mean 1 pass 1 of 2",
		"bias #2 m-b mean 0.25 pass 0 of 2",
	})

	name = "commits summarized per day"
	check(t, name, run(t, name, func(r *sql.Rows) (string, error) {
		var day dayOf
		var commits, n int
		var cost float64
		err := r.Scan(&day, &commits, &n, &cost)
		return fmt.Sprintf("%s %d commits %d summaries $%g", day, commits, n, cost), err
	}), []string{
		"2026-11-29 1 commits 1 summaries $2",
		"2026-11-30 1 commits 1 summaries $0.25",
		"2026-12-01 1 commits 1 summaries $0.5",
		"2026-12-06 2 commits 2 summaries $0.625",
		"2026-12-07 1 commits 1 summaries $1",
	})
}

// testMetricRowsGoWithTheirRun: a result's metric rows are replaced when
// it is written again, a metric named twice is stored once, and pruning a
// run deletes its metric rows and no other run's.
func testMetricRowsGoWithTheirRun(t *testing.T, b Backend) {
	ctx := context.Background()
	s := fillViews(t, b)
	db := sqlOf(t, s)
	count := func(run string) int {
		t.Helper()
		var n int
		q := `SELECT COUNT(*) FROM eval_result_metrics WHERE run_id = ?`
		if b.Dialect == "postgres" {
			q = strings.ReplaceAll(q, "?", "$1")
		}
		if err := db.QueryRowContext(ctx, q, run).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := count("run-new"); got != 8 {
		t.Errorf("run-new has %d metric rows, want 8", got)
	}
	twice := []store.MetricScore{{Name: "bias", Pass: true, Score: 1}, {Name: "bias", Pass: false, Score: 0}, {Name: "tone", Pass: true, Score: 0.5}}
	if err := s.SaveRunResults(ctx, []store.RunResult{{RunID: "run-new", Model: "m-a", Item: "item-1", Line: 1, Key: "run-new/m-a/1", Pass: true, Score: 1, Metrics: twice}}); err != nil {
		t.Fatal(err)
	}
	for row, err := range s.RunRows(ctx, "run-new", []string{"m-a"}, true) {
		if err != nil {
			t.Fatal(err)
		}
		if row.Line == 1 {
			if want := []store.MetricScore{twice[0], twice[2]}; !slices.Equal(row.Metrics, want) {
				t.Errorf("rewritten line 1 has %+v, want %+v", row.Metrics, want)
			}
			if row.Answer != "answer run-new/m-a/1" {
				t.Errorf("rewritten line 1 answers %q, want its answer once", row.Answer)
			}
		}
	}
	if got := count("run-new"); got != 8 {
		t.Errorf("after rewriting a result, run-new has %d metric rows, want 8", got)
	}
	p, err := s.PruneRuns(ctx, store.RunPrune{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.IDs, []string{"run-old"}) {
		t.Fatalf("pruned %v, want run-old", p.IDs)
	}
	if got, kept := count("run-old"), count("run-new"); got != 0 || kept != 8 {
		t.Errorf("after pruning run-old: %d of its metric rows left, and %d of run-new's; want 0 and 8", got, kept)
	}
}

// testRunRowsPagesThroughLargeRuns reads a run of more results than one
// page of RunRows holds, with and without bodies (pages of 5,000 and 500),
// a page ending between two repeats of a line: every result comes once,
// in order, with its own answer and grades.
func testRunRowsPagesThroughLargeRuns(t *testing.T, b Backend) {
	ctx := context.Background()
	s := newStore(t, b)
	startRun(t, s, "big")
	const lines, repeats = 1701, 3 // pages of 5,000 and 500 end mid-line
	var answers []store.EvalResult
	var rows []store.RunResult
	for _, model := range []string{"m1", "m2"} {
		for line := 1; line <= lines; line++ {
			for repeat := range repeats {
				k := fmt.Sprintf("%s/%d/%d", model, line, repeat)
				rr := store.RunResult{RunID: "big", Model: model, Item: "i", Line: line, Repeat: repeat, Key: k, Score: float64(repeat)}
				if line%7 == 0 {
					rr.Metrics = []store.MetricScore{{Name: "bias", Pass: repeat == 1, Score: float64(line)}, {Name: "accuracy", Score: float64(repeat)}}
				}
				rows = append(rows, rr)
				if line%100 == 0 {
					answers = append(answers, store.EvalResult{Key: k, Model: model, Request: []byte(k), Answer: "answer " + k})
				}
			}
		}
	}
	for chunk := range slices.Chunk(rows, 1000) {
		if err := s.SaveEval(ctx, store.EvalWrite{Rows: chunk}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveEval(ctx, store.EvalWrite{Answers: answers}); err != nil {
		t.Fatal(err)
	}
	for _, bodies := range []bool{false, true} {
		i := 0
		for row, err := range s.RunRows(ctx, "big", []string{"m1", "m2"}, bodies) {
			if err != nil {
				t.Fatal(err)
			}
			if i >= len(rows) {
				t.Fatalf("bodies %v: more than the %d results stored", bodies, len(rows))
			}
			want := rows[i]
			if row.Model != want.Model || row.Line != want.Line || row.Repeat != want.Repeat || !slices.Equal(row.Metrics, want.Metrics) {
				t.Fatalf("bodies %v: result %d is %s line %d repeat %d with %+v, want %s line %d repeat %d with %+v",
					bodies, i, row.Model, row.Line, row.Repeat, row.Metrics, want.Model, want.Line, want.Repeat, want.Metrics)
			}
			if wantAnswer := bodies && want.Line%100 == 0; (row.Answer != "") != wantAnswer || wantAnswer && row.Answer != "answer "+want.Key {
				t.Fatalf("bodies %v: result %s answers %q", bodies, want.Key, row.Answer)
			}
			i++
		}
		if i != len(rows) {
			t.Errorf("bodies %v: read %d results, want %d", bodies, i, len(rows))
		}
	}
}
