package cmd

import (
	"bytes"
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
	field     string // of a row of the final report, naming its item
}

// TestCrashSafety kills real digest processes with SIGKILL at random
// moments while requests are in flight, reruns them to completion, and
// checks the promises of a crash: the database is intact, no stored result
// is lost or paid again, at most the requests in flight at a kill are paid
// twice, the dead process's leases do not hold the rerun up, and the final
// report lists every item once. DIGEST_CRASH_SEED repeats the kill moments
// of a logged run.
func TestCrashSafety(t *testing.T) {
	bin := digestBinary(t) // and kills it many times
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
			sent: func(req fakeprovider.Received) (hashes []string) {
				text := req.System
				for _, m := range req.Messages {
					text += "\n" + m.Content
				}
				for _, c := range prompt.Parse(text) {
					hashes = append(hashes, c.Hash)
				}
				return hashes
			},
			committed: func(t *testing.T, db string) map[string]bool {
				return queryItems(t, db, "SELECT commit_hash FROM summaries")
			},
			field: "commit",
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
		field: "item",
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
	p := start(t, digestCmd(bin, "first", args...), func(string) bool { return srv.Stats().Succeeded >= 5 })
	if code := p.signal(t, syscall.SIGINT); code != 130 || !strings.Contains(p.errOut.String(), "digest: interrupted; results so far are stored") {
		t.Fatalf("exit %d, want 130 and a line saying digest was interrupted and what it kept; stderr:\n%s", code, p.errOut.String())
	}
	checkIntegrity(t, db)
	stored := queryItems(t, db, "SELECT DISTINCT r.item FROM eval_run_results r JOIN eval_results e ON e.key = r.key")
	if len(stored) == 0 || len(stored) == n {
		t.Fatalf("%d of %d answers stored after the interrupt, want some but not all", len(stored), n)
	}
	if left := countRows(t, db, "leases"); left != 0 {
		t.Errorf("%d leases left by the interrupted run, want none: it gives them back", left)
	}
	st := srv.Stats()
	if answers := countRows(t, db, "eval_results"); answers != st.Succeeded || st.Canceled != 0 {
		t.Errorf("%d answers stored of %d received, %d requests cut off by the interrupt; want every answer stored and none cut off", answers, st.Succeeded, st.Canceled)
	}

	// Every item reported, over n requests in all: none paid twice, neither
	// one the interrupted run stored nor one it had in flight.
	res := exited(t, digestCmd(bin, "second", args...), 0)
	if got, st := reportedField(t, res.out, "item"), srv.Stats(); res.code != 0 || len(got) != n || st.Requests != n {
		t.Errorf("the rerun: exit %d, %d items reported after %d requests in all; want %d of each: the interrupted run awaits the requests in flight and stores their answers\n%s", res.code, len(got), st.Requests, n, res.errOut)
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
	res := exited(t, digestCmd(bin, "baseline", job.args(fresh(t, "baseline"), srv.OpenAIBaseURL())...), 0)
	span := time.Since(start)
	if got := reportedField(t, res.out, job.field); res.code != 0 || len(got) != len(job.items) {
		t.Fatalf("a run without kills: exit %d, %d items reported, want %d\n%s", res.code, len(got), len(job.items), res.errOut)
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
			res := exited(t, digestCmd(bin, run.key, job.args(db, srv.OpenAIBaseURL())...), run.delay)
			if run.killed = res.code == -1; res.code != 0 && !run.killed {
				t.Fatalf("trial %d run %d: exit %d\n%s", trial, i, res.code, res.errOut)
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
				leftLeases += countRows(t, db, "leases")
			}
			runs = append(runs, run)
			if !run.killed {
				// Done: the report lists every item once.
				got := reportedField(t, res.out, job.field)
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
	total, allowed, inFlight := map[string]int{}, map[string]int{}, 0
	for i, run := range runs {
		for _, req := range reqs {
			if req.Header.Get("Authorization") != "Bearer "+run.key {
				continue
			}
			for _, item := range job.sent(req) {
				total[item]++
				if i > 0 && runs[i-1].committed[item] {
					t.Errorf("trial %d run %d paid again for %s, stored by an earlier run", trial, i, item)
				}
				if run.killed && !run.committed[item] {
					// Asked for but not stored when the process died: in flight.
					inFlight++
					allowed[item]++
				}
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

// TestBatchRunKilledWhilePolling: SIGKILL while digest waits for its batch,
// then the same command again: no second batch is created for the same
// requests, every result is collected, and the database is intact.
func TestBatchRunKilledWhilePolling(t *testing.T) {
	bin := digestBinary(t)
	repo := historyRepo(t, 30)
	data := evalItems(t, 30)
	for _, tt := range []struct {
		name, field, table string
		args               []string
	}{
		{"summarize", "commit", "summaries", []string{"summarize", repo.Dir, "--model"}},
		{"eval", "item", "eval_run_results", []string{"eval", data, "--models"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 3 * time.Second}})
			db := filepath.Join(t.TempDir(), "digest.db")
			args := append(append([]string{"--db", db}, tt.args...), "openai:m", "--base-url", srv.OpenAIBaseURL(), "--batch-api", "--batch-poll", "100ms", "-f", "jsonl")
			// The batch goes out a second after the last request is made;
			// the kill comes while it runs.
			if res := exited(t, digestCmd(bin, "sk-test", args...), 2*time.Second); res.code != -1 {
				t.Fatalf("the run ended (exit %d) before the kill: %s", res.code, res.errOut)
			}
			if n := srv.Stats().BatchesCreated; n != 1 {
				t.Fatalf("%d batches created before the kill, want 1 (kill too early or too late)", n)
			}
			checkIntegrity(t, db)
			res := exited(t, digestCmd(bin, "sk-test", args...), 0)
			if n := len(reportedField(t, res.out, tt.field)); res.code != 0 || n != 30 {
				t.Errorf("rerun: exit %d, %d rows reported, want 30\n%s", res.code, n, res.errOut)
			}
			st := srv.Stats()
			if st.BatchesCreated != 1 || st.BatchItemsAnswered != st.BatchItems {
				t.Errorf("after the rerun: %d batches, %d items, %d answered; want the one batch", st.BatchesCreated, st.BatchItems, st.BatchItemsAnswered)
			}
			checkIntegrity(t, db)
			if n := countRows(t, db, tt.table); n != 30 {
				t.Errorf("%d rows stored, want 30", n)
			}
		})
	}
}

// The helpers of every test of a real digest process: this file's, and
// summarize_process_test.go's and eval_process_test.go's.

// digestBinary is buildDigest's binary; under -short, which starts no
// process, it skips the test.
func digestBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return buildDigest(t)
}

// buildDigest compiles the real binary once per test run (each build
// costs seconds on a small machine), for every test of a process to share.
func buildDigest(t testing.TB) string {
	t.Helper()
	if raceEnabled {
		// The binary is built without -race, so a process test under the
		// race detector checks nothing the plain run did not: CI runs each
		// once, in go test ./..., and the race run is left to the in-process
		// tests of the pipelines and of cmd.
		t.Skip("runs the digest binary, which is not race-instrumented: runs without -race")
	}
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// binDir holds the binary build made, which TestMain removes.
var binDir string

var build = sync.OnceValues(func() (string, error) {
	var err error
	if binDir, err = os.MkdirTemp("", "digest-test-bin"); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "digest")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// TestMain removes the shared binary; the test wrapper exits with m.Run's code.
func TestMain(m *testing.M) {
	m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// digestCmd is the binary run with args, key as its OpenAI API key unless "".
func digestCmd(bin, key string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	if key != "" {
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY="+key)
	}
	return cmd
}

// exited runs cmd to its end, sending it SIGKILL after kill unless 0, and
// returns its exit code (-1 when a signal ended it) and what it wrote.
func exited(t *testing.T, cmd *exec.Cmd, kill time.Duration) result {
	t.Helper()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	p := start(t, cmd, nil)
	if kill > 0 {
		defer time.AfterFunc(kill, func() { cmd.Process.Kill() }).Stop()
	}
	code := p.wait(t)
	return result{code: code, out: stdout.String(), errOut: p.errOut.String()}
}

// runAll runs cmds at once, as CI jobs would, and returns what each
// printed. Any failing fails the test.
func runAll(t *testing.T, cmds ...*exec.Cmd) []string {
	t.Helper()
	outs, errs := make([]bytes.Buffer, len(cmds)), make([]bytes.Buffer, len(cmds))
	fails := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		cmd.Stdout, cmd.Stderr = &outs[i], &errs[i]
		wg.Go(func() { fails[i] = cmd.Run() })
	}
	wg.Wait()
	printed := make([]string, len(cmds))
	for i := range cmds {
		if fails[i] != nil {
			t.Fatalf("process %d: %v: %s", i, fails[i], errs[i].String())
		}
		printed[i] = outs[i].String()
	}
	return printed
}

// runTogether runs two digest processes with the same arguments at once,
// as two CI jobs would, and returns what each printed.
func runTogether(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	return runAll(t, digestCmd(bin, "k", args...), digestCmd(bin, "k", args...))
}

// otherMachines reports whether processes can run as other machines, in
// UTS namespaces of their own: as root, with unshare -u.
func otherMachines() bool {
	return os.Geteuid() == 0 && exec.Command("unshare", "-u", "true").Run() == nil
}

// onMachine runs args on this machine when host is "", else on another
// one to digest: in a UTS namespace of its own (unshare -u, as root), a
// shell renames its host, then becomes the command.
func onMachine(host string, args []string) *exec.Cmd {
	if host == "" {
		return exec.Command(args[0], args[1:]...)
	}
	return exec.Command("unshare", append([]string{"-u", "sh", "-c", `hostname "$0" && exec "$@"`, host}, args...)...)
}

// running is a real digest process started, its standard error read as
// it writes it.
type running struct {
	cmd    *exec.Cmd
	errOut lockedBuffer
	done   chan error
}

// start starts cmd and returns once ready, given what the process wrote on
// standard error so far, reports true (at once when nil). The process
// ending first, or a minute passing, fails the test.
func start(t *testing.T, cmd *exec.Cmd, ready func(errOut string) bool) *running {
	t.Helper()
	p := &running{cmd: cmd, done: make(chan error, 1)}
	cmd.Stderr = &p.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(time.Minute); ready != nil && !ready(p.errOut.String()); time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-p.done:
			t.Fatalf("digest ended (%v) before the moment the test waited for:\n%s", err, p.errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the moment the test waited for did not come within a minute:\n%s", p.errOut.String())
		}
	}
	return p
}

// signal sends sig to the process and returns its exit code.
func (p *running) signal(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	return p.wait(t)
}

// wait returns the process's exit code (-1 when a signal ended it); it
// fails the test, killing the process, if it still runs a minute later
// (waiting out a dead process's lease, when it was run with --lease 1h).
func (p *running) wait(t *testing.T) int {
	t.Helper()
	var err error
	select {
	case err = <-p.done:
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		t.Fatalf("digest still running after a minute:\n%s", p.errOut.String())
	}
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		return exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// lines are the lines the process wrote on standard error.
func (p *running) lines() []string { return strings.Split(strings.TrimSpace(p.errOut.String()), "\n") }

// lockedBuffer is a bytes.Buffer safe to read while another goroutine
// writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// forEachDatabase runs test where processes share a cache: an SQLite file, and
// a PostgreSQL database of its own when a server is given
// (DIGEST_TEST_POSTGRES; required in CI).
func forEachDatabase(t *testing.T, test func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "shared.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgtest.FreshDatabase(t)) })
}

// historyOf is a repository of n commits.
func historyOf(t *testing.T, n int) string {
	r := gittest.New(t)
	for i := range n {
		r.Write(fmt.Sprintf("f%d.txt", i%9), fmt.Sprintf("version %d of %s\n", i, r.Dir)).Commit(fmt.Sprint("change ", i))
	}
	return r.Dir
}

// checkIntegrity opens the database as SQLite itself would after a crash
// and runs its consistency checks. A PostgreSQL server keeps its own.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); isPostgres(path) || errors.Is(err, os.ErrNotExist) {
		return // or killed before it opened the database
	}
	var res string
	query(t, path, "PRAGMA integrity_check", func(rows *sql.Rows) error { return rows.Scan(&res) })
	if res != "ok" {
		t.Fatalf("%s failed its integrity check after a kill: %s", path, res)
	}
	query(t, path, "PRAGMA foreign_key_check", func(*sql.Rows) error {
		return fmt.Errorf("%s has rows whose foreign keys point nowhere after a kill", path)
	})
}

// queryItems is the set of values of a one-column query.
func queryItems(t *testing.T, db, q string) map[string]bool {
	t.Helper()
	items := map[string]bool{}
	if migrated(t, db) {
		query(t, db, q, func(rows *sql.Rows) error {
			var s string
			err := rows.Scan(&s)
			items[s] = true
			return err
		})
	}
	return items
}

// countRows counts a table's rows: none in a database not yet made.
func countRows(t *testing.T, db, table string) int {
	t.Helper()
	n := 0
	if migrated(t, db) {
		query(t, db, "SELECT count(*) FROM "+table, func(rows *sql.Rows) error { return rows.Scan(&n) })
	}
	return n
}

// migrated reports whether the database exists with its tables: a process
// killed early may have left none, or an empty file.
func migrated(t *testing.T, db string) bool {
	t.Helper()
	q := "SELECT count(*) FROM sqlite_master WHERE name = 'leases'"
	if isPostgres(db) {
		q = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'leases'"
	} else if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return false
	}
	n := 0
	query(t, db, q, func(rows *sql.Rows) error { return rows.Scan(&n) })
	return n > 0
}

// reportedField is the given field of each line of a JSON Lines report.
func reportedField(t *testing.T, out, field string) []string {
	t.Helper()
	var got []string
	for line := range strings.Lines(out) {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("report line %q: %v", line, err)
		}
		s, _ := row[field].(string)
		got = append(got, s)
	}
	return got
}

func isPostgres(db string) bool { return strings.HasPrefix(db, "postgres://") }

// query reads a digest database directly, an SQLite file or a PostgreSQL
// URL, row by row, while a process may be writing it.
func query(t *testing.T, db, q string, row func(*sql.Rows) error) {
	t.Helper()
	driver, source := "sqlite", "file:"+db+"?_pragma=busy_timeout(5000)" // a live run's writes may hold it a moment
	if isPostgres(db) {
		driver, source = "pgx", db
	}
	conn, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(q)
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

// crashUnder starts cmd, crashes the PostgreSQL server once the provider
// has had 10 requests, checks that cmd then exits 1, and returns the lines
// it wrote on standard error.
func crashUnder(t *testing.T, cmd *exec.Cmd, srv *fakeprovider.Server, pg *pgtest.Server) []string {
	t.Helper()
	p := start(t, cmd, func(string) bool { return srv.Stats().Requests >= 10 })
	pg.Crash(t)
	if code := p.wait(t); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, p.errOut.String())
	}
	return p.lines()
}
