package fleetbench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/pgtest"
)

// BenchmarkFleet measures a fleet: N real digest eval processes sharing
// one PostgreSQL database, reached through a proxy adding a round trip's
// latency (internal/pgtest's), against a fake provider in this process
// that answers after a fixed latency (internal/fakeprovider's). For each
// added latency and each number of processes, a sub-benchmark reports the
// answers a second over the wall time (the processes' start and end
// included) and while sending (from the provider's first admission to its
// last), the database sessions opened per 1,000 answers
// (pg_stat_database.sessions, PostgreSQL 14 and later), the share of the
// provider's limit used in steady state (after its first window) and of
// requests answered 429 (with DIGEST_BENCH_RPS), the requests paid twice
// (items answered 200 more than once), the items never answered and the
// processes that failed; at the end it prints them all as a table.
//
// It runs only given a server: DIGEST_BENCH_POSTGRES, a URL of a user who
// may create databases (one is made for each configuration and dropped
// after), else DIGEST_TEST_POSTGRES. .ci/bench-fleet starts a throwaway
// one when neither is set. Its options are environment variables
// (fleetOptions lists them), for example:
//
//	DIGEST_BENCH_PROCS=1,4,16,32 DIGEST_BENCH_LATENCY=0,2ms,10ms DIGEST_BENCH_ITEMS=500 \
//	  go test ./internal/fleetbench -run '^$' -bench '^BenchmarkFleet$' -benchtime 1x -timeout 0
func BenchmarkFleet(b *testing.B) {
	server := os.Getenv("DIGEST_BENCH_POSTGRES")
	if server == "" {
		server = os.Getenv("DIGEST_TEST_POSTGRES")
	}
	if server == "" {
		b.Skip("no PostgreSQL server. Try: .ci/bench-fleet, or DIGEST_BENCH_POSTGRES=URL of a user who may create databases")
	}
	o, err := fleetOptions(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	if o.digest == "" {
		o.digest = buildDigest(b)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		b.Fatalf("cannot reach the PostgreSQL server at %s: %v", redactedURL(server), err)
	}
	defer admin.Close(context.Background())
	var version, maxConns string
	if err := admin.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('max_connections')").Scan(&version, &maxConns); err != nil {
		b.Fatal(err)
	}
	if o.commitDelay > 0 {
		if err := slowCommits(ctx, admin, server, o.commitDelay); err != nil {
			b.Fatal(err)
		}
	}
	head := fmt.Sprintf("PostgreSQL %s (max_connections %s) on 127.0.0.1; %d cores; provider latency %s; -j %d; %d items a process, dataset %s",
		version, maxConns, runtime.NumCPU(), o.providerLatency, o.concurrency, o.items, o.dataset)
	if o.rps > 0 {
		head += fmt.Sprintf("; provider limit %d/s over %s (--rpm %d)", o.rps, fleetWindow, o.rps*60)
	}
	if o.commitDelay > 0 {
		head += fmt.Sprintf("; commits wait %s for their flush", o.commitDelay)
	}
	if len(o.env) > 0 {
		head += "; env " + strings.Join(o.env, " ")
	}
	rows := []string{head, fmt.Sprintf(fleetRow, "processes", "added RTT", "answers", "answers/s", "sending/s", "sessions/1k", "limit used", "429s", "paid twice", "unanswered", "failed", "wall")}
	for _, rtt := range o.latencies {
		for _, n := range o.procs {
			b.Run(fmt.Sprintf("procs=%d/rtt=%s", n, rtt), func(b *testing.B) {
				for range b.N {
					r, err := runFleet(b, ctx, o, admin, server, n, rtt)
					if err != nil {
						b.Fatal(err)
					}
					used := "-"
					if o.rps > 0 && r.limitUsed >= 0 {
						used = fmt.Sprintf("%.1f%%", 100*r.limitUsed)
						b.ReportMetric(100*r.limitUsed, "%limit-used")
					} else if o.rps > 0 {
						used = "short"
					}
					answersPerSec := float64(r.answers) / r.wall.Seconds()
					perK := 1000 * float64(r.sessions) / float64(max(r.answers, 1))
					b.ReportMetric(answersPerSec, "answers/s")
					b.ReportMetric(r.sending, "sending/s")
					b.ReportMetric(perK, "sessions/1k-answers")
					b.ReportMetric(100*r.share429, "%429")
					b.ReportMetric(float64(r.paidTwice), "paid-twice")
					b.ReportMetric(float64(r.unanswered), "unanswered")
					b.ReportMetric(float64(r.failed), "failed-procs")
					row := fmt.Sprintf(fleetRow, strconv.Itoa(n), rtt.String(), strconv.Itoa(r.answers),
						fmt.Sprintf("%.1f", answersPerSec), fmt.Sprintf("%.1f", r.sending), fmt.Sprintf("%.0f", perK),
						used, fmt.Sprintf("%.2f%%", 100*r.share429), strconv.Itoa(r.paidTwice), strconv.Itoa(r.unanswered),
						strconv.Itoa(r.failed), fmt.Sprintf("%.1fs", r.wall.Seconds()))
					if r.failure != "" {
						row += fmt.Sprintf("\n  %d of %d processes failed; the first said: %s", r.failed, n, r.failure)
					}
					rows = append(rows, row)
				}
			})
		}
	}
	// The table goes to standard output after the benchmarks' lines: a
	// parent benchmark's b.Log is not shown.
	fmt.Println(strings.Join(rows, "\n"))
}

// fleetRow is a row of BenchmarkFleet's table.
const fleetRow = "%9s %9s %8s %9s %9s %11s %10s %6s %10s %10s %6s %7s"

// fleetWindow is the fake provider's rate window with DIGEST_BENCH_RPS: a
// minute scaled down, long enough that a process starved of CPU for a
// moment between taking its turn and sending does not read as a burst.
const fleetWindow = 5 * time.Second

// fleetModel is what the processes ask for: unknown to digest's table, so
// that only DIGEST_BENCH_RPS (as --rpm) or nothing limits it.
const fleetModel = "openai:gpt-fleet"

// fleetOpts are BenchmarkFleet's options, read by fleetOptions.
type fleetOpts struct {
	digest          string
	procs           []int
	latencies       []time.Duration
	items           int
	concurrency     int
	dataset         string
	rps             int
	providerLatency time.Duration
	commitDelay     time.Duration
	timeout         time.Duration
	env             []string
	keep            bool
}

// fleetOptions reads BenchmarkFleet's options from the environment
// (getenv):
//
//	DIGEST_BENCH_PROCS             numbers of digest eval processes, comma separated (1,4,16)
//	DIGEST_BENCH_LATENCY           round-trip latencies the proxy adds before PostgreSQL (0,2ms; 0: no proxy)
//	DIGEST_BENCH_ITEMS             items per process: a configuration's dataset holds procs × items (100)
//	DIGEST_BENCH_J                 digest eval -j, requests in flight per process (16)
//	DIGEST_BENCH_DATASET           shared (every process reads the whole dataset, from its own
//	                               starting point, and claims decide who pays) or sharded (shared)
//	DIGEST_BENCH_RPS               the provider's limit a second over a 5 s window, told to digest
//	                               as --rpm (0: no limit)
//	DIGEST_BENCH_PROVIDER_LATENCY  how long the fake provider takes to answer (5ms)
//	DIGEST_BENCH_COMMIT_DELAY      make each commit's flush take this long (fsync on, commit_delay):
//	                               only on a server of the benchmark's own, DIGEST_BENCH_POSTGRES_DIR
//	DIGEST_BENCH_TIMEOUT           give up on one configuration after this long (10m)
//	DIGEST_BENCH_ENV               KEY=VALUE settings for every process, space separated
//	DIGEST_BENCH_KEEP              1 keeps each configuration's database instead of dropping it
//	DIGEST_BENCH_DIGEST            the digest binary to measure (default: built from this checkout)
func fleetOptions(getenv func(string) string) (fleetOpts, error) {
	o := fleetOpts{digest: getenv("DIGEST_BENCH_DIGEST"), dataset: "shared", keep: getenv("DIGEST_BENCH_KEEP") == "1"}
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	var err error
	if o.procs, err = fleetInts("DIGEST_BENCH_PROCS", get("DIGEST_BENCH_PROCS", "1,4,16")); err != nil {
		return o, err
	}
	if o.latencies, err = fleetDurations("DIGEST_BENCH_LATENCY", get("DIGEST_BENCH_LATENCY", "0,2ms")); err != nil {
		return o, err
	}
	for _, n := range []struct {
		name, def string
		to        *int
		least     int
	}{
		{"DIGEST_BENCH_ITEMS", "100", &o.items, 1},
		{"DIGEST_BENCH_J", "16", &o.concurrency, 1},
		{"DIGEST_BENCH_RPS", "0", &o.rps, 0},
	} {
		v, err := strconv.Atoi(get(n.name, n.def))
		if err != nil || v < n.least {
			return o, fmt.Errorf("%s=%s: want a whole number of %d or more. Try: %s=%s", n.name, getenv(n.name), n.least, n.name, n.def)
		}
		*n.to = v
	}
	for _, d := range []struct {
		name, def string
		to        *time.Duration
	}{
		{"DIGEST_BENCH_PROVIDER_LATENCY", "5ms", &o.providerLatency},
		{"DIGEST_BENCH_COMMIT_DELAY", "0", &o.commitDelay},
		{"DIGEST_BENCH_TIMEOUT", "10m", &o.timeout},
	} {
		ds, err := fleetDurations(d.name, get(d.name, d.def))
		if err != nil || len(ds) != 1 {
			return o, fmt.Errorf("%s=%s: want one duration of 0 or more. Try: %s=%s", d.name, getenv(d.name), d.name, d.def)
		}
		*d.to = ds[0]
	}
	o.dataset = get("DIGEST_BENCH_DATASET", "shared")
	o.env = strings.Fields(getenv("DIGEST_BENCH_ENV"))
	switch {
	case o.dataset != "shared" && o.dataset != "sharded":
		return o, fmt.Errorf("DIGEST_BENCH_DATASET=%s: want shared or sharded. Try: DIGEST_BENCH_DATASET=shared", o.dataset)
	case o.timeout <= 0:
		return o, errors.New("DIGEST_BENCH_TIMEOUT=0: want a positive duration. Try: DIGEST_BENCH_TIMEOUT=10m")
	case o.commitDelay > 0 && getenv("DIGEST_BENCH_POSTGRES_DIR") == "":
		return o, errors.New("DIGEST_BENCH_COMMIT_DELAY changes the server's settings, so it needs a server of its own. Try: .ci/bench-fleet with DIGEST_BENCH_POSTGRES unset, which starts one")
	}
	for _, kv := range o.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return o, fmt.Errorf("DIGEST_BENCH_ENV: %q is not KEY=VALUE. Try: DIGEST_BENCH_ENV='DIGEST_DB_POOL=4'", kv)
		}
	}
	return o, nil
}

func fleetInts(name, s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%s: %q is not a whole number of 1 or more. Try: %s=1,4,16", name, s, f, name)
		}
		out = append(out, n)
	}
	return out, nil
}

func fleetDurations(name, s string) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "0" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s=%s: %q is not a duration of 0 or more. Try: %s=0,2ms,10ms", name, s, f, name)
		}
		out = append(out, d)
	}
	return out, nil
}

// fleetResult is what one configuration measured.
type fleetResult struct {
	answers    int // answered 200: paid
	wall       time.Duration
	sending    float64 // requests admitted a second, from the first admission to the last
	sessions   int64
	limitUsed  float64
	share429   float64
	paidTwice  int // items answered more than once
	unanswered int // items never answered
	failed     int // processes that did not exit 0
	failure    string
}

// runFleet runs n processes through a proxy adding rtt (none at 0) on a
// database of their own, and measures them; b's timer runs only while
// they do.
func runFleet(b *testing.B, ctx context.Context, o fleetOpts, admin *pgx.Conn, server string, n int, rtt time.Duration) (fleetResult, error) {
	b.StopTimer()
	defer b.StartTimer()
	var r fleetResult
	dbURL, name, err := createFleetDatabase(ctx, admin, server)
	if err != nil {
		return r, err
	}
	if !o.keep {
		defer admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	}
	// Migrated before the clock starts, as a fleet's database is.
	if out, err := exec.CommandContext(ctx, o.digest, "--db", dbURL, "runs", "list", "-f", "json").CombinedOutput(); err != nil {
		return r, fmt.Errorf("migrating %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	reach := dbURL
	if rtt > 0 {
		u, _ := url.Parse(dbURL)
		proxy, err := pgtest.StartProxy(u.Host, rtt)
		if err != nil {
			return r, err
		}
		defer proxy.Close()
		if reach, err = proxy.URL(dbURL); err != nil {
			return r, err
		}
	}
	cfg := fakeprovider.Config{Latency: o.providerLatency, RetryAfter: true}
	if o.rps > 0 {
		cfg.Window, cfg.RPM = fleetWindow, o.rps*int(fleetWindow/time.Second)
	}
	srv, err := fakeprovider.New(cfg)
	if err != nil {
		return r, err
	}
	defer srv.Close()
	datasets, err := writeFleetDatasets(b.TempDir(), o, n)
	if err != nil {
		return r, err
	}
	before, err := fleetSessions(ctx, admin, name)
	if err != nil {
		return r, err
	}

	runCtx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	errs := make([]string, n)
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for p := range n {
		args := []string{"--db", reach, "--quiet", "eval", datasets[p], "--models", fleetModel, "--base-url", srv.OpenAIBaseURL(),
			"-j", strconv.Itoa(o.concurrency), "--max-tokens", "16", "-f", "json", "-o", os.DevNull}
		if o.rps > 0 {
			args = append(args, "--rpm", strconv.Itoa(o.rps*60))
		}
		cmd := exec.CommandContext(runCtx, o.digest, args...)
		cmd.Env = append(fleetEnv(), "OPENAI_API_KEY=sk-fleet-bench")
		cmd.Env = append(cmd.Env, o.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wg.Go(func() {
			if err := cmd.Run(); err != nil {
				errs[p] = fmt.Sprintf("%v: %s", err, fleetFirstLine(stderr.String()))
			}
		})
	}
	wg.Wait()
	r.wall = time.Since(start)
	b.StopTimer()
	for _, e := range errs {
		if e != "" {
			r.failed++
			if r.failure == "" {
				r.failure = e
			}
		}
	}
	if runCtx.Err() != nil {
		r.failure = fmt.Sprintf("timed out after %s (DIGEST_BENCH_TIMEOUT); %s", o.timeout, r.failure)
	}

	after, err := fleetSessionsWhenIdle(ctx, admin, name)
	if err != nil {
		return r, err
	}
	r.sessions = after - before
	st := srv.Stats()
	r.answers = st.Succeeded
	if st.Requests > 0 {
		r.share429 = float64(st.RateLimited) / float64(st.Requests)
	}
	if len(st.Admitted) > 1 {
		first, last := st.Admitted[0].At, st.Admitted[len(st.Admitted)-1].At
		r.sending = float64(len(st.Admitted)-1) / last.Sub(first).Seconds()
		// In steady state: the first window may take a whole window's
		// allowance at once, so it is left out, and a run that did not
		// send for two windows has no steady state to read.
		r.limitUsed = -1
		if o.rps > 0 && last.Sub(first) >= 2*fleetWindow {
			r.limitUsed, _ = st.LimitUse(cfg.RPM, 0, fleetWindow)
		}
	}
	paid := map[string]int{}
	for _, rec := range srv.Requests() {
		if rec.Status == 200 && len(rec.Messages) > 0 {
			paid[rec.Messages[len(rec.Messages)-1].Content]++
		}
	}
	for _, times := range paid {
		if times > 1 {
			r.paidTwice++
		}
	}
	r.unanswered = n*o.items - len(paid)
	return r, nil
}

// writeFleetDatasets writes each process's dataset in dir. Shared: one
// set of n*items items, which process p reads from item p*items on,
// wrapping around, so that every process may answer any item and the
// claims decide who pays. Sharded: process p reads items p*items to
// (p+1)*items alone.
func writeFleetDatasets(dir string, o fleetOpts, n int) ([]string, error) {
	total := n * o.items
	paths := make([]string, n)
	for p := range n {
		paths[p] = filepath.Join(dir, fmt.Sprintf("items-%d.jsonl", p))
		f, err := os.Create(paths[p])
		if err != nil {
			return nil, err
		}
		w := bufio.NewWriter(f)
		count := o.items
		if o.dataset == "shared" {
			count = total
		}
		for k := range count {
			i := (p*o.items + k) % total
			fmt.Fprintf(w, `{"id":"q%d","prompt":"Item %d of the fleet: what is %d + %d?","expected":"%d","assert":[{"type":"numeric"}]}`+"\n", i, i, i, i+1, 2*i+1)
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// fleetEnv is this process's environment without DIGEST_ variables, so
// that a DIGEST_DB or DIGEST_CONCURRENCY set for other work does not
// change what is measured; DIGEST_BENCH_ENV adds to it.
func fleetEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "DIGEST_") })
}

func fleetFirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(nothing on standard error)"
	}
	return s
}

func createFleetDatabase(ctx context.Context, admin *pgx.Conn, server string) (dbURL, name string, err error) {
	random := make([]byte, 4)
	rand.Read(random)
	name = "digest_fleet_" + hex.EncodeToString(random)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", "", fmt.Errorf("create database %s on %s: %w. Try: a user who may create databases", name, redactedURL(server), err)
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", "", err
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), name, nil
}

// fleetSessions is how many sessions the database has had since the
// server's statistics were reset.
func fleetSessions(ctx context.Context, admin *pgx.Conn, name string) (int64, error) {
	var n int64
	err := admin.QueryRow(ctx, "SELECT COALESCE((SELECT sessions FROM pg_stat_database WHERE datname = $1), 0)", name).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pg_stat_database.sessions (PostgreSQL 14 or later): %w", err)
	}
	return n, nil
}

// fleetSessionsWhenIdle waits for the database's sessions to end, each of
// which reports itself to the statistics as it ends, then counts them.
func fleetSessionsWhenIdle(ctx context.Context, admin *pgx.Conn, name string) (int64, error) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var open int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", name).Scan(&open); err != nil {
			return 0, err
		}
		if open == 0 {
			break
		}
	}
	time.Sleep(200 * time.Millisecond)
	return fleetSessions(ctx, admin, name)
}

// slowCommits turns fsync on and makes every commit's flush sleep d
// (commit_delay; commit_siblings 0 makes a lone commit sleep too), and
// waits until new sessions see it.
func slowCommits(ctx context.Context, admin *pgx.Conn, server string, d time.Duration) error {
	for _, q := range []string{
		"ALTER SYSTEM SET fsync = on",
		fmt.Sprintf("ALTER SYSTEM SET commit_delay = %d", d.Microseconds()),
		"ALTER SYSTEM SET commit_siblings = 0",
		"SELECT pg_reload_conf()",
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	want := strconv.FormatInt(d.Microseconds(), 10)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := pgx.Connect(ctx, server)
		if err != nil {
			return err
		}
		var got string
		err = c.QueryRow(ctx, "SHOW commit_delay").Scan(&got)
		c.Close(ctx)
		if err != nil {
			return err
		}
		if got == want {
			return nil
		}
	}
	return errors.New("the server did not take the new commit_delay within 30 s")
}

func redactedURL(server string) string {
	if u, err := url.Parse(server); err == nil {
		return u.Redacted()
	}
	return "the server"
}

// TestFleetOptionsReadTheEnvironment: fleetOptions reads BenchmarkFleet's
// environment: its defaults when nothing is set, every setting when set,
// and a bad one as an error that names the variable and what to write.
func TestFleetOptionsReadTheEnvironment(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	o, err := fleetOptions(env(nil))
	if err != nil || !slices.Equal(o.procs, []int{1, 4, 16}) || !slices.Equal(o.latencies, []time.Duration{0, 2 * time.Millisecond}) ||
		o.items != 100 || o.concurrency != 16 || o.dataset != "shared" || o.rps != 0 || o.providerLatency != 5*time.Millisecond ||
		o.timeout != 10*time.Minute || o.commitDelay != 0 || len(o.env) != 0 || o.keep || o.digest != "" {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	o, err = fleetOptions(env(map[string]string{"DIGEST_BENCH_PROCS": "2, 8", "DIGEST_BENCH_LATENCY": "10ms", "DIGEST_BENCH_ITEMS": "50",
		"DIGEST_BENCH_J": "4", "DIGEST_BENCH_DATASET": "sharded", "DIGEST_BENCH_RPS": "500", "DIGEST_BENCH_PROVIDER_LATENCY": "1ms",
		"DIGEST_BENCH_COMMIT_DELAY": "2ms", "DIGEST_BENCH_POSTGRES_DIR": "/tmp/pg", "DIGEST_BENCH_TIMEOUT": "1m",
		"DIGEST_BENCH_ENV": "DIGEST_DB_POOL=4 A=b=c", "DIGEST_BENCH_KEEP": "1", "DIGEST_BENCH_DIGEST": "/bin/digest"}))
	if err != nil || !slices.Equal(o.procs, []int{2, 8}) || !slices.Equal(o.latencies, []time.Duration{10 * time.Millisecond}) ||
		o.items != 50 || o.concurrency != 4 || o.dataset != "sharded" || o.rps != 500 || o.providerLatency != time.Millisecond ||
		o.commitDelay != 2*time.Millisecond || o.timeout != time.Minute || !slices.Equal(o.env, []string{"DIGEST_DB_POOL=4", "A=b=c"}) ||
		!o.keep || o.digest != "/bin/digest" {
		t.Fatalf("all set: %+v, %v", o, err)
	}
	for bad, want := range map[[2]string]string{
		{"DIGEST_BENCH_PROCS", "1,0"}:          `DIGEST_BENCH_PROCS=1,0: "0" is not a whole number of 1 or more. Try: DIGEST_BENCH_PROCS=1,4,16`,
		{"DIGEST_BENCH_LATENCY", "2"}:          `DIGEST_BENCH_LATENCY=2: "2" is not a duration of 0 or more. Try: DIGEST_BENCH_LATENCY=0,2ms,10ms`,
		{"DIGEST_BENCH_ITEMS", "0"}:            "DIGEST_BENCH_ITEMS=0: want a whole number of 1 or more. Try: DIGEST_BENCH_ITEMS=100",
		{"DIGEST_BENCH_RPS", "-1"}:             "DIGEST_BENCH_RPS=-1: want a whole number of 0 or more. Try: DIGEST_BENCH_RPS=0",
		{"DIGEST_BENCH_TIMEOUT", "1m,2m"}:      "DIGEST_BENCH_TIMEOUT=1m,2m: want one duration of 0 or more. Try: DIGEST_BENCH_TIMEOUT=10m",
		{"DIGEST_BENCH_TIMEOUT", "0"}:          "DIGEST_BENCH_TIMEOUT=0: want a positive duration. Try: DIGEST_BENCH_TIMEOUT=10m",
		{"DIGEST_BENCH_DATASET", "all"}:        "DIGEST_BENCH_DATASET=all: want shared or sharded. Try: DIGEST_BENCH_DATASET=shared",
		{"DIGEST_BENCH_COMMIT_DELAY", "2ms"}:   "DIGEST_BENCH_COMMIT_DELAY changes the server's settings, so it needs a server of its own. Try: .ci/bench-fleet with DIGEST_BENCH_POSTGRES unset, which starts one",
		{"DIGEST_BENCH_ENV", "DIGEST_DB_POOL"}: `DIGEST_BENCH_ENV: "DIGEST_DB_POOL" is not KEY=VALUE. Try: DIGEST_BENCH_ENV='DIGEST_DB_POOL=4'`,
		{"DIGEST_BENCH_PROVIDER_LATENCY", "x"}: "DIGEST_BENCH_PROVIDER_LATENCY=x: want one duration of 0 or more. Try: DIGEST_BENCH_PROVIDER_LATENCY=5ms",
	} {
		if _, err := fleetOptions(env(map[string]string{bad[0]: bad[1]})); err == nil || err.Error() != want {
			t.Errorf("%s=%s: %v\nwant %s", bad[0], bad[1], err, want)
		}
	}
}
