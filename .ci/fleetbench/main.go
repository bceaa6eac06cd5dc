// Command fleetbench measures a fleet: N digest eval processes sharing one
// PostgreSQL database, reached through a proxy adding a round trip's
// latency (internal/pgtest's), against a fake provider in this process
// that answers after a fixed latency (internal/fakeprovider's). For each
// number of processes and each added latency it prints the answers a
// second over the wall time (the processes' start and end included) and
// while sending (from the provider's first admission to its last), the
// database sessions opened per 1,000 answers (pg_stat_database.sessions,
// PostgreSQL 14 and later), the share of the provider's limit used in
// steady state (after its first window) and of requests answered 429 (with
// -rps), the requests paid twice (items answered 200 more than once) and
// the items never answered.
//
// Run it through .ci/bench-fleet, which passes its flags on:
//
//	.ci/bench-fleet                                      # a quick look: 1, 4, 16 processes at 0 and 2 ms
//	.ci/bench-fleet -procs 1,4,16,32 -latency 0,2ms,10ms -items 500
//	.ci/bench-fleet -procs 16 -rps 500 -commit-delay 2ms -items 1000   # the limit off the flush
//
// The database is DIGEST_BENCH_POSTGRES (a URL of a user who may create
// databases: one is made for each configuration and dropped after), or a
// throwaway server started with .ci/postgres. It is not built by go test
// ./... (a directory starting with '.'); .ci/run vets it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/pgtest"
)

// window is the fake provider's rate window with -rps: a minute scaled
// down, long enough that a process starved of CPU for a moment between
// taking its turn and sending does not read as a burst (see
// cmd/shared_test.go's sharedWindow).
const window = 5 * time.Second

// model is what the processes ask for: unknown to digest's table, so that
// only -rps (as --rpm) or nothing limits it.
const model = "openai:gpt-fleet"

type options struct {
	digest          string
	postgres        string
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

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	os.Exit(run())
}

func run() int {
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		if ctx.Err() != nil {
			return 130
		}
		return 1
	}
	return 0
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("fleetbench", flag.ContinueOnError)
	procs := fs.String("procs", "1,4,16", "numbers of digest eval processes, comma separated")
	latencies := fs.String("latency", "0,2ms", "round-trip latencies the proxy adds between the processes and PostgreSQL, comma separated (0: no proxy)")
	fs.StringVar(&o.digest, "digest", "", "the digest binary (default: go build . into a temporary directory)")
	fs.StringVar(&o.postgres, "postgres", os.Getenv("DIGEST_BENCH_POSTGRES"), "a PostgreSQL URL whose user may create databases (default $DIGEST_BENCH_POSTGRES, else a throwaway server of .ci/postgres)")
	fs.IntVar(&o.items, "items", 100, "items per process: each configuration's dataset holds procs × items items")
	fs.IntVar(&o.concurrency, "j", 16, "digest eval -j: requests in flight per process")
	fs.StringVar(&o.dataset, "dataset", "shared", "shared: every process reads the whole dataset, each from its own starting point, and claims decide who pays; sharded: each process its own items")
	fs.IntVar(&o.rps, "rps", 0, "the provider's limit in requests a second, counted over a 5 s window, and told to digest as --rpm (0: no limit)")
	fs.DurationVar(&o.providerLatency, "provider-latency", 5*time.Millisecond, "how long the fake provider takes to answer")
	fs.DurationVar(&o.commitDelay, "commit-delay", 0, "make each commit's flush take this long (fsync on, data on /dev/shm, commit_delay): only on the throwaway server")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up on one configuration after this long")
	fs.Var((*stringList)(&o.env), "env", "KEY=VALUE to set for every digest process, e.g. DIGEST_DB_POOL=4 (repeatable)")
	fs.BoolVar(&o.keep, "keep", false, "keep each configuration's database instead of dropping it")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q. Try: flags only, e.g. -procs 1,4 -latency 0,2ms", fs.Arg(0))
	}
	var err error
	if o.procs, err = parseInts("-procs", *procs); err != nil {
		return o, err
	}
	if o.latencies, err = parseDurations("-latency", *latencies); err != nil {
		return o, err
	}
	switch {
	case o.items < 1:
		return o, fmt.Errorf("-items %d: want 1 or more. Try: -items 100", o.items)
	case o.concurrency < 1:
		return o, fmt.Errorf("-j %d: want 1 or more. Try: -j 16", o.concurrency)
	case o.dataset != "shared" && o.dataset != "sharded":
		return o, fmt.Errorf("-dataset %q: want shared or sharded. Try: -dataset shared", o.dataset)
	case o.rps < 0:
		return o, fmt.Errorf("-rps %d is negative. Try: -rps 500, or 0 for no limit", o.rps)
	case o.providerLatency < 0 || o.commitDelay < 0 || o.timeout <= 0:
		return o, errors.New("-provider-latency and -commit-delay must not be negative, -timeout must be positive. Try: -provider-latency 5ms -commit-delay 2ms -timeout 10m")
	case o.commitDelay > 0 && o.postgres != "":
		return o, errors.New("-commit-delay changes the server's settings, so it needs a server of its own. Try: unset DIGEST_BENCH_POSTGRES and leave -postgres empty")
	}
	for _, kv := range o.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return o, fmt.Errorf("-env %q is not KEY=VALUE. Try: -env DIGEST_DB_POOL=4", kv)
		}
	}
	return o, nil
}

func parseInts(flagName, s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: %q is not a whole number of 1 or more. Try: %s 1,4,16", flagName, s, f, flagName)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseDurations(flagName, s string) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "0" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s %q: %q is not a duration of 0 or more. Try: %s 0,2ms,10ms", flagName, s, f, flagName)
		}
		out = append(out, d)
	}
	return out, nil
}

// bench runs every configuration, latencies outermost, and prints a row
// for each as it ends.
func bench(ctx context.Context, o options) error {
	work, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.digest == "" {
		o.digest = filepath.Join(work, "digest")
		build := exec.CommandContext(ctx, "go", "build", "-o", o.digest, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build . (run from the checkout's root, as .ci/bench-fleet does): %w", err)
		}
	}
	server := o.postgres
	if server == "" {
		var stopServer func()
		server, stopServer, err = throwawayServer(ctx, o.commitDelay)
		if err != nil {
			return err
		}
		defer stopServer()
	}
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		return fmt.Errorf("cannot reach the PostgreSQL server at %s: %w", redacted(server), err)
	}
	defer admin.Close(context.Background())
	var version, maxConns string
	if err := admin.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('max_connections')").Scan(&version, &maxConns); err != nil {
		return err
	}
	if o.commitDelay > 0 {
		if err := slowCommits(ctx, admin, server, o.commitDelay); err != nil {
			return err
		}
	}
	fmt.Printf("fleetbench: PostgreSQL %s (max_connections %s) on 127.0.0.1; %d cores; provider latency %s; -j %d; %d items a process, dataset %s",
		version, maxConns, runtime.NumCPU(), o.providerLatency, o.concurrency, o.items, o.dataset)
	if o.rps > 0 {
		fmt.Printf("; provider limit %d/s over %s (--rpm %d)", o.rps, window, o.rps*60)
	}
	if o.commitDelay > 0 {
		fmt.Printf("; commits wait %s for their flush", o.commitDelay)
	}
	if len(o.env) > 0 {
		fmt.Printf("; env %s", strings.Join(o.env, " "))
	}
	fmt.Println()
	const row = "%9s %9s %8s %9s %9s %11s %10s %6s %10s %10s %6s %7s\n"
	fmt.Printf(row, "processes", "added RTT", "answers", "answers/s", "sending/s", "sessions/1k", "limit used", "429s", "paid twice", "unanswered", "failed", "wall")
	for _, rtt := range o.latencies {
		for _, n := range o.procs {
			r, err := runConfig(ctx, o, admin, server, work, n, rtt)
			if err != nil {
				return err
			}
			used := "-"
			if o.rps > 0 && r.limitUsed >= 0 {
				used = fmt.Sprintf("%.1f%%", 100*r.limitUsed)
			} else if o.rps > 0 {
				used = "short"
			}
			fmt.Printf(row, strconv.Itoa(n), rtt.String(), strconv.Itoa(r.answers),
				fmt.Sprintf("%.1f", float64(r.answers)/r.wall.Seconds()), fmt.Sprintf("%.1f", r.sending),
				fmt.Sprintf("%.0f", 1000*float64(r.sessions)/float64(max(r.answers, 1))),
				used, fmt.Sprintf("%.2f%%", 100*r.share429), strconv.Itoa(r.paidTwice), strconv.Itoa(r.unanswered),
				strconv.Itoa(r.failed), fmt.Sprintf("%.1fs", r.wall.Seconds()))
			if r.failure != "" {
				fmt.Printf("  %d of %d processes failed; the first said: %s\n", r.failed, n, r.failure)
			}
		}
	}
	return nil
}

type result struct {
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

// runConfig runs n processes through a proxy adding rtt (none at 0) on a
// database of their own, and measures them.
func runConfig(ctx context.Context, o options, admin *pgx.Conn, server, work string, n int, rtt time.Duration) (result, error) {
	var r result
	dbURL, name, err := createDatabase(ctx, admin, server)
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
		cfg.Window, cfg.RPM = window, o.rps*int(window/time.Second)
	}
	srv, err := fakeprovider.New(cfg)
	if err != nil {
		return r, err
	}
	defer srv.Close()
	datasets, err := writeDatasets(filepath.Join(work, name), o, n)
	if err != nil {
		return r, err
	}
	before, err := sessions(ctx, admin, name)
	if err != nil {
		return r, err
	}

	runCtx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	errs := make([]string, n)
	var wg sync.WaitGroup
	start := time.Now()
	for p := range n {
		args := []string{"--db", reach, "--quiet", "eval", datasets[p], "--models", model, "--base-url", srv.OpenAIBaseURL(),
			"-j", strconv.Itoa(o.concurrency), "--max-tokens", "16", "-f", "json", "-o", os.DevNull}
		if o.rps > 0 {
			args = append(args, "--rpm", strconv.Itoa(o.rps*60))
		}
		cmd := exec.CommandContext(runCtx, o.digest, args...)
		cmd.Env = append(processEnv(), "OPENAI_API_KEY=sk-fleet-bench")
		cmd.Env = append(cmd.Env, o.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wg.Go(func() {
			if err := cmd.Run(); err != nil {
				errs[p] = fmt.Sprintf("%v: %s", err, firstLine(stderr.String()))
			}
		})
	}
	wg.Wait()
	r.wall = time.Since(start)
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	for _, e := range errs {
		if e != "" {
			r.failed++
			if r.failure == "" {
				r.failure = e
			}
		}
	}
	if runCtx.Err() != nil {
		r.failure = fmt.Sprintf("timed out after %s (-timeout); %s", o.timeout, r.failure)
	}

	after, err := sessionsWhenIdle(ctx, admin, name)
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
		if o.rps > 0 && last.Sub(first) >= 2*window {
			r.limitUsed, _ = st.LimitUse(cfg.RPM, 0, window)
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

// writeDatasets writes each process's dataset. Shared: one set of
// n*items items, which process p reads from item p*items on, wrapping
// around, so that every process may answer any item and the claims decide
// who pays. Sharded: process p reads items p*items to (p+1)*items alone.
func writeDatasets(dir string, o options, n int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
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

// processEnv is this process's environment without DIGEST_ variables, so
// that a DIGEST_DB or DIGEST_CONCURRENCY set for other work does not
// change what is measured; -env adds to it.
func processEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "DIGEST_") })
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(nothing on standard error)"
	}
	return s
}

func createDatabase(ctx context.Context, admin *pgx.Conn, server string) (dbURL, name string, err error) {
	random := make([]byte, 4)
	rand.Read(random)
	name = "digest_fleet_" + hex.EncodeToString(random)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", "", fmt.Errorf("create database %s on %s: %w. Try: a user who may create databases", name, redacted(server), err)
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", "", err
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), name, nil
}

// sessions is how many sessions the database has had since the server's
// statistics were reset.
func sessions(ctx context.Context, admin *pgx.Conn, name string) (int64, error) {
	var n int64
	err := admin.QueryRow(ctx, "SELECT COALESCE((SELECT sessions FROM pg_stat_database WHERE datname = $1), 0)", name).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pg_stat_database.sessions (PostgreSQL 14 or later): %w", err)
	}
	return n, nil
}

// sessionsWhenIdle waits for the database's sessions to end, each of
// which reports itself to the statistics as it ends, then counts them.
func sessionsWhenIdle(ctx context.Context, admin *pgx.Conn, name string) (int64, error) {
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
	return sessions(ctx, admin, name)
}

// throwawayServer starts a server with .ci/postgres (on /dev/shm when its
// commits are to wait a set time, so that the disk's own flush adds
// nothing) and returns its URL and how to stop it.
func throwawayServer(ctx context.Context, commitDelay time.Duration) (string, func(), error) {
	parent := ""
	if fi, err := os.Stat("/dev/shm"); commitDelay > 0 && err == nil && fi.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "fleetbench-pg-")
	if err != nil {
		return "", nil, err
	}
	stop := func() {
		exec.Command("bash", ".ci/postgres", "stop", dir).Run()
		os.RemoveAll(dir)
	}
	out, err := exec.CommandContext(ctx, "bash", ".ci/postgres", "start", dir).Output()
	if err != nil {
		stop()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
		}
		return "", nil, fmt.Errorf(".ci/postgres start %s (run from the checkout's root, as .ci/bench-fleet does): %w", dir, err)
	}
	return strings.TrimSpace(string(out)), stop, nil
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

func redacted(server string) string {
	if u, err := url.Parse(server); err == nil {
		return u.Redacted()
	}
	return "the server"
}
