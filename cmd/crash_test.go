package cmd

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/prompt"
)

// crashJob is a digest command under the crash test: how to run it, and how
// to tell which items a request carried, which the database holds, and
// which the final report lists.
type crashJob struct {
	items []string // every item the command must produce
	args  func(db, url string) []string
	// sent names the items a request to the provider carried.
	sent func(fakeprovider.Received) []string
	// committed names the items whose paid result the database holds.
	committed func(t *testing.T, db string) map[string]bool
	// reported names the item of each row of the final report.
	reported func(t *testing.T, out []byte) []string
}

// TestCrashSafety kills real digest processes with SIGKILL at random
// moments while requests are in flight, reruns them to completion, and
// checks the promises of a crash: the database is intact, no stored result
// is lost or paid again, at most the requests in flight at a kill are paid
// twice, the dead process's leases do not hold the rerun up, and the final
// report lists every item once. DIGEST_CRASH_SEED repeats the kill moments
// of a logged run.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it many times")
	}
	bin := buildDigest(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DIGEST_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("DIGEST_CRASH_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (DIGEST_CRASH_SEED=%d repeats these kill moments)", seed, seed)

	t.Run("summarize", func(t *testing.T) {
		r := gittest.New(t)
		var items []string
		var body strings.Builder
		for i := range 40 {
			fmt.Fprintf(&body, "line %d\n", i)
			items = append(items, r.Write("log.txt", body.String()).Commit(fmt.Sprintf("Change %d", i)))
		}
		crashLoop(t, bin, rand.New(rand.NewPCG(seed, 1)), crashJob{
			items: items,
			args: func(db, url string) []string {
				return []string{"--db", db, "summarize", r.Dir, "--model", "openai:m", "--base-url", url,
					"--batch-size", "3", "--concurrency", "3", "--lease", "1h", "-f", "jsonl"}
			},
			sent: func(req fakeprovider.Received) []string {
				text := req.System
				for _, m := range req.Messages {
					text += "\n" + m.Content
				}
				var hashes []string
				for _, c := range prompt.Parse(text) {
					hashes = append(hashes, c.Hash)
				}
				return hashes
			},
			committed: func(t *testing.T, db string) map[string]bool {
				return queryItems(t, db, "SELECT commit_hash FROM summaries")
			},
			reported: func(t *testing.T, out []byte) []string {
				return reportedField(t, out, "commit")
			},
		}, sqliteFile)
	})

	t.Run("eval", func(t *testing.T) {
		crashLoop(t, bin, rand.New(rand.NewPCG(seed, 2)), evalCrashJob(t, 40, 4), sqliteFile)
	})
	// Sixteen requests at once: answers land faster than one transaction
	// stores them, so the writer stores them in batches, and a kill finds
	// answers waiting for it as well as requests in flight.
	t.Run("eval-j16", func(t *testing.T) {
		crashLoop(t, bin, rand.New(rand.NewPCG(seed, 3)), evalCrashJob(t, 160, 16), sqliteFile)
	})
	// The same through PostgreSQL, 2 ms away: each transaction takes a few
	// milliseconds, so more answers wait in the writer's queue at a kill.
	t.Run("eval-postgres", func(t *testing.T) {
		pgtest.URL(t)
		crashLoop(t, bin, rand.New(rand.NewPCG(seed, 4)), evalCrashJob(t, 160, 16), func(t *testing.T, _ string) string {
			return pgtest.Proxied(t, pgtest.FreshDatabase(t), 2*time.Millisecond)
		})
	})

	t.Run("eval-sigint", func(t *testing.T) { evalInterrupted(t, bin, 2) })
	t.Run("eval-sigint-j16", func(t *testing.T) { evalInterrupted(t, bin, 16) })
}

// evalCrashJob is digest eval of n items at concurrency j under the crash
// test.
func evalCrashJob(t *testing.T, n, j int) crashJob {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("q%d", i)
	}
	data := evalItems(t, n)
	return crashJob{
		items: items,
		args: func(db, url string) []string {
			return []string{"--db", db, "eval", data, "--models", "openai:m", "--base-url", url,
				"--concurrency", strconv.Itoa(j), "--lease", "1h", "-f", "jsonl"}
		},
		sent: func(req fakeprovider.Received) []string {
			item, _, _ := strings.Cut(req.Messages[len(req.Messages)-1].Content, ":")
			return []string{item}
		},
		committed: func(t *testing.T, db string) map[string]bool {
			// Items with their answer and their row stored. An answer is
			// stored before it is scored, so one killed between the two
			// is left out here, though it is not paid again either.
			return queryItems(t, db, "SELECT DISTINCT r.item FROM eval_run_results r JOIN eval_results e ON e.key = r.key")
		},
		reported: func(t *testing.T, out []byte) []string {
			return reportedField(t, out, "item")
		},
	}
}

// sqliteFile is a trial's database: a file of its own.
func sqliteFile(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name+".db")
}

// evalInterrupted stops a real digest eval with SIGINT once some answers
// are in: it exits 130 saying so, having awaited the requests in flight and
// stored every answer it received (those waiting to be written included),
// and a rerun pays only for the rest.
func evalInterrupted(t *testing.T, bin string, concurrency int) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 20 * time.Millisecond})
	const n = 40
	data := evalItems(t, n)
	db := filepath.Join(t.TempDir(), "digest.db")
	args := []string{"--db", db, "eval", data, "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(), "-j", strconv.Itoa(concurrency), "-f", "jsonl"}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=first")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); srv.Stats().Succeeded < 5; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no answers after a minute; stderr:\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "digest: interrupted; results so far are stored") {
		t.Errorf("stderr should say digest was interrupted and what it kept:\n%s", stderr.String())
	}
	checkIntegrity(t, db)
	stored := queryItems(t, db, "SELECT DISTINCT r.item FROM eval_run_results r JOIN eval_results e ON e.key = r.key")
	if len(stored) == 0 || len(stored) == n {
		t.Fatalf("%d of %d answers stored after the interrupt, want some but not all", len(stored), n)
	}
	if left := countRows(t, db, "SELECT count(*) FROM leases"); left != 0 {
		t.Errorf("%d leases left by the interrupted run, want none: it gives them back", left)
	}
	st := srv.Stats()
	if answers := countRows(t, db, "SELECT count(*) FROM eval_results"); answers != st.Succeeded || st.Canceled != 0 {
		t.Errorf("%d answers stored of %d received, %d requests cut off by the interrupt; want every answer stored and none cut off", answers, st.Succeeded, st.Canceled)
	}

	out, errOut, err := runDigest(bin, args, "second", 0)
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, errOut)
	}
	got := reportedField(t, out, "item")
	if len(got) != n {
		t.Errorf("the rerun reported %d items, want %d", len(got), n)
	}
	asked := map[string]int{}
	for _, req := range srv.Requests() {
		item, _, _ := strings.Cut(req.Messages[len(req.Messages)-1].Content, ":")
		asked[item]++
	}
	repaid := 0
	for item, k := range asked {
		if k > 1 && stored[item] {
			t.Errorf("%s was paid for again though the interrupted run stored it", item)
		}
		repaid += k - 1
	}
	if repaid > 0 {
		t.Errorf("%d answers paid twice: the interrupted run awaits the requests in flight and stores their answers", repaid)
	}
	if len(asked) != n {
		t.Errorf("%d items asked for in all, want %d", len(asked), n)
	}
}

// crashLoop runs trials on fresh databases until at least minKills
// processes have been killed: in each, the command is started and killed
// at a random moment twice in a row (each run resuming the last), then run
// to completion; what was paid is checked against what was stored.
func crashLoop(t *testing.T, bin string, rng *rand.Rand, job crashJob, fresh func(t *testing.T, name string) string) {
	const minKills, maxTrials = 12, 40
	var latencyMu sync.Mutex
	latency := rand.New(rand.NewPCG(rng.Uint64(), 3))
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(req fakeprovider.Received) string {
		// A random service time, so that several requests are in flight
		// at any moment and a kill finds some half done.
		latencyMu.Lock()
		d := time.Duration(5+latency.IntN(35)) * time.Millisecond
		latencyMu.Unlock()
		time.Sleep(d)
		return fakeprovider.DefaultAnswer(req)
	}})

	// One whole run first: how long one takes is the span kills are drawn from.
	start := time.Now()
	out, errOut, err := runDigest(bin, job.args(fresh(t, "baseline"), srv.OpenAIBaseURL()), "baseline", 0)
	if err != nil {
		t.Fatalf("a run without kills failed: %v\n%s", err, errOut)
	}
	span := time.Since(start)
	if got := job.reported(t, out); len(got) != len(job.items) {
		t.Fatalf("a run without kills reported %d items, want %d", len(got), len(job.items))
	}

	kills, leftLeases := 0, 0
	for trial := 0; kills < minKills; trial++ {
		if trial == maxTrials {
			t.Fatalf("only %d of %d trials' processes were still running when killed; the runs are too short to kill", kills, trial)
		}
		db := fresh(t, fmt.Sprintf("trial%d", trial))
		var runs []crashRun
		committed := map[string]bool{}
		for i := range 3 {
			run := crashRun{key: fmt.Sprintf("key-%d-%d", trial, i)}
			if i < 2 {
				run.delay = time.Duration(rng.Int64N(int64(span)))
			}
			out, errOut, err := runDigest(bin, job.args(db, srv.OpenAIBaseURL()), run.key, run.delay)
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				ws, _ := exit.Sys().(syscall.WaitStatus)
				run.killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
			}
			if err != nil && !run.killed {
				t.Fatalf("trial %d run %d: %v\n%s", trial, i, err, errOut)
			}
			checkIntegrity(t, db)
			now := job.committed(t, db)
			for item := range committed {
				if !now[item] {
					t.Errorf("trial %d run %d: the result of %s, stored before, is gone", trial, i, item)
				}
			}
			committed, run.committed = now, now
			if run.killed {
				kills++
				leftLeases += countRows(t, db, "SELECT count(*) FROM leases")
			}
			runs = append(runs, run)
			if !run.killed {
				// Done: the report lists every item once.
				got := job.reported(t, out)
				slices.Sort(got)
				if want := slices.Sorted(slices.Values(job.items)); !slices.Equal(got, want) {
					t.Errorf("trial %d: the final report lists %d rows, want each of the %d items once:\n%v", trial, len(got), len(want), got)
				}
				if owners := queryItems(t, db, "SELECT owner FROM leases"); len(owners) != 0 {
					t.Errorf("trial %d: leases left after the run that finished, by %v", trial, owners)
				}
				break
			}
		}
		checkPayments(t, trial, job, srv.Requests(), runs)
	}
	// The dead processes' leases did not hold their reruns up (those run
	// with --lease 1h, and the finished runs left none), and there were
	// some to clear.
	if leftLeases == 0 {
		t.Errorf("none of the %d killed processes left a lease behind, so clearing them was never tried", kills)
	}
	t.Logf("%d processes killed, leaving %d leases that their reruns cleared", kills, leftLeases)
}

// crashRun is one process of a trial.
type crashRun struct {
	key       string        // its API key, which tells its requests apart
	delay     time.Duration // when it was to be killed; 0: never
	killed    bool
	committed map[string]bool // the items the database held after it
}

// checkPayments compares what each run of a trial asked the provider for
// with what the database held after it.
func checkPayments(t *testing.T, trial int, job crashJob, reqs []fakeprovider.Received, runs []crashRun) {
	t.Helper()
	sent := make([]map[string]int, len(runs))
	for i, run := range runs {
		sent[i] = map[string]int{}
		for _, req := range reqs {
			if req.Header.Get("Authorization") == "Bearer "+run.key {
				for _, item := range job.sent(req) {
					sent[i][item]++
				}
			}
		}
	}
	total := map[string]int{}
	inFlight, allowed := 0, map[string]int{}
	for i, run := range runs {
		for item, n := range sent[i] {
			total[item] += n
			if i > 0 && runs[i-1].committed[item] {
				t.Errorf("trial %d run %d paid again for %s, stored by an earlier run", trial, i, item)
			}
			if run.killed && !run.committed[item] {
				// Asked for but not stored when the process died: in flight.
				inFlight += n
				allowed[item] += n
			}
		}
	}
	repaid := 0
	for item, n := range total {
		if n > 1 {
			repaid += n - 1
		}
		if n > 1+allowed[item] {
			t.Errorf("trial %d: %s was paid for %d times, but in flight at only %d kills", trial, item, n, allowed[item])
		}
	}
	if repaid > inFlight {
		t.Errorf("trial %d: %d requests paid twice, more than the %d in flight at the kills", trial, repaid, inFlight)
	}
	delays := make([]string, len(runs))
	for i, run := range runs {
		delays[i] = fmt.Sprintf("%v killed=%v stored=%d", run.delay.Round(time.Millisecond), run.killed, len(run.committed))
	}
	t.Logf("trial %d: %s; %d requests in flight at the kills, %d paid twice", trial, strings.Join(delays, ", "), inFlight, repaid)
}

// runDigest runs the binary with key as its API key and, when kill is not
// zero, sends it SIGKILL after that long. It waits for the process either
// way; the rerun, with --lease 1h, would hang here on a lease it failed to
// take over, so it is bounded.
func runDigest(bin string, args []string, key string, kill time.Duration) (out, errOut []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	if kill > 0 {
		timer := time.AfterFunc(kill, func() { cmd.Process.Kill() })
		defer timer.Stop()
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after a minute (waiting out a dead process's lease?): %v", err)
	}
	return stdout.Bytes(), stderr.Bytes(), err
}

// checkIntegrity opens the database as SQLite itself would after a crash
// and runs its consistency checks. A PostgreSQL server keeps its own.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	if isPostgres(path) {
		return
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return // killed before it opened the database
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatalf("integrity check of %s: %v", path, err)
	}
	if res != "ok" {
		t.Fatalf("%s failed its integrity check after a kill: %s", path, res)
	}
	rows, err := db.Query("PRAGMA foreign_key_check")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if rows.Next() {
		t.Fatalf("%s has rows whose foreign keys point nowhere after a kill", path)
	}
}

func queryItems(t *testing.T, db, query string) map[string]bool {
	t.Helper()
	items := map[string]bool{}
	if !migrated(t, db) {
		return items
	}
	queryAny(t, db, query, func(rows *sql.Rows) error {
		var s string
		err := rows.Scan(&s)
		items[s] = true
		return err
	})
	return items
}

func countRows(t *testing.T, db, query string) int {
	t.Helper()
	n := 0
	if !migrated(t, db) {
		return n
	}
	queryAny(t, db, query, func(rows *sql.Rows) error { return rows.Scan(&n) })
	return n
}

// migrated reports whether the database exists with its tables: a process
// killed early may have left none, or an empty file.
func migrated(t *testing.T, db string) bool {
	t.Helper()
	if isPostgres(db) {
		n := 0
		queryAny(t, db, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'leases'", func(rows *sql.Rows) error { return rows.Scan(&n) })
		return n > 0
	}
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return false
	}
	return countTables(t, db) > 0
}

func countTables(t *testing.T, db string) int {
	n := 0
	queryDB(t, db, "SELECT count(*) FROM sqlite_master WHERE name = 'leases'", func(rows *sql.Rows) error { return rows.Scan(&n) })
	return n
}

// reportedField is the given field of each line of a JSON Lines report.
func reportedField(t *testing.T, out []byte, field string) []string {
	t.Helper()
	var got []string
	lines := bufio.NewScanner(bytes.NewReader(out))
	for lines.Scan() {
		var row map[string]any
		if err := json.Unmarshal(lines.Bytes(), &row); err != nil {
			t.Fatalf("report line %q: %v", lines.Text(), err)
		}
		s, _ := row[field].(string)
		got = append(got, s)
	}
	return got
}

func isPostgres(db string) bool { return strings.HasPrefix(db, "postgres://") }

// queryAny is queryDB for an SQLite file or a PostgreSQL URL.
func queryAny(t *testing.T, db, query string, row func(*sql.Rows) error) {
	t.Helper()
	if !isPostgres(db) {
		queryDB(t, db, query, row)
		return
	}
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
