package sharedlimit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/postgres"
)

// takeClients is how many processes take from one limit at once.
const takeClients = 16

// BenchmarkSharedLimitTakes measures how many requests a fleet can charge
// to one shared limit: 16 clients, each with a store of its own as a
// process has, take from one limit as fast as they can. PostgreSQL runs on
// a server of the benchmark's own (it needs DIGEST_TEST_POSTGRES_DIR, as
// the tests that start servers do) whose commits wait commitN for their
// flush: 0 is fsync off, as the tests' servers run; 2ms is fsync on, the
// data on /dev/shm when there is one, and a commit_delay that brings a
// lone commit to 2 ms (a synchronous replica, network storage), measured
// and reported as commit-ms. The limiter's row
// is locked until the commit, so a take that waits for its flush holds
// every other behind it: before issue 25, 16 clients made about 1/(commit
// latency) takes a second. SQLite, in WAL mode at synchronous=NORMAL,
// flushes at checkpoints only.
//
//	go test ./internal/sharedlimit -run '^$' -bench SharedLimitTakes -benchtime 3s
func BenchmarkSharedLimitTakes(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "digest.db")
		measureTakes(b, func() store.Store { return openStore(b, path) })
	})
	for _, commit := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("postgres-commit%s", commit), func(b *testing.B) {
			if commit > 0 {
				onMemory(b)
			}
			srv := pgtest.StartServer(b)
			latency := slowCommits(b, srv.URL, commit)
			measureTakes(b, func() store.Store {
				s, err := postgres.Open(context.Background(), srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				return s
			})
			b.ReportMetric(float64(latency)/float64(time.Millisecond), "commit-ms")
		})
	}
}

// measureTakes has takeClients stores take b.N times in all from one
// limit of 500 requests a second, and reports the takes a second.
func measureTakes(b *testing.B, open func() store.Store) {
	limits := make([]sharedlimit.Limit, takeClients)
	for i := range limits {
		limits[i] = sharedlimit.Limit{Store: open(), Name: "bench account"}
	}
	ctx := context.Background()
	charge := engine.Charge{Cost: 2 * time.Millisecond, Burst: time.Second}
	for _, l := range limits { // each client's connection opened before timing
		if _, err := l.Take(ctx, charge, engine.Charge{}); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, l := range limits {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if _, err := l.Take(ctx, charge, engine.Charge{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "takes/s")
}

// onMemory puts the next server's data on /dev/shm when it is there: a
// flush to memory costs nothing, so commit_delay alone sets the commit's
// latency instead of the disk's flush, which varies from 1 to 4 ms here.
func onMemory(b *testing.B) {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		b.Setenv("TMPDIR", "/dev/shm")
	}
}

// slowCommits makes the server of url wait commit in each commit's flush
// (0: fsync off, no wait) and returns the median latency of a lone
// commit, measured.
func slowCommits(b *testing.B, url string, commit time.Duration) time.Duration {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	set := func(fsync string, delay time.Duration) {
		for _, q := range []string{
			"ALTER SYSTEM SET fsync = " + fsync,
			fmt.Sprintf("ALTER SYSTEM SET commit_delay = %d", delay.Microseconds()),
			// commit_delay sleeps only with this many other transactions
			// open: 0 makes a lone commit sleep too.
			"ALTER SYSTEM SET commit_siblings = 0",
			"SELECT pg_reload_conf()",
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		// New sessions read the settings once the server has reloaded.
		want := fmt.Sprint(fsync, " ", delay.Microseconds())
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			fresh, err := pgx.Connect(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			var got string
			err = fresh.QueryRow(ctx, "SELECT current_setting('fsync') || ' ' || current_setting('commit_delay')").Scan(&got)
			fresh.Close(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("after 30 s new sessions read fsync and commit_delay as %q, want %q", got, want)
			}
		}
	}
	if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS commit_probe (n bigint)"); err != nil {
		b.Fatal(err)
	}
	if commit == 0 {
		set("off", 0)
		return lonelyCommit(b, url)
	}
	set("on", 0)
	disk := lonelyCommit(b, url)
	set("on", max(commit-disk, 0))
	return lonelyCommit(b, url)
}

// lonelyCommit is the median time of one small committed write on a new
// session (which reads the server's settings as they are now), less the
// median round trip of a statement that commits nothing.
func lonelyCommit(b *testing.B, url string) time.Duration {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	median := func(q string) time.Duration {
		times := make([]time.Duration, 41)
		for i := range times {
			start := time.Now()
			if _, err := c.Exec(ctx, q); err != nil {
				b.Fatal(err)
			}
			times[i] = time.Since(start)
		}
		slices.Sort(times)
		return times[len(times)/2]
	}
	return max(median("INSERT INTO commit_probe VALUES (1)")-median("SELECT 1"), 0)
}
