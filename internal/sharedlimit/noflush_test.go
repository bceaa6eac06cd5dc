package sharedlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store/postgres"
	"github.com/digest-cli/digest/internal/store/sqlstore"
)

// The shared limit's statements commit without waiting for the disk or a
// synchronous standby (issue 25): on a server whose every writing commit
// waits for a standby that never comes, the limit is still taken, paused
// and learned, and each process sees what the others did, while an
// ordinary write on that server waits. The setting holds for those
// statements alone: the session still waits for its other commits.
func TestSharedLimitWaitsForNoFlush(t *testing.T) {
	srv := pgtest.StartServer(t)
	ctx := context.Background()
	admin := connect(t, srv.URL)
	if _, err := admin.Exec(ctx, "CREATE TABLE probe (n int)"); err != nil {
		t.Fatal(err)
	}
	// Migrated before the standby is named: a migration waits for it.
	first, err := postgres.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	const standby = "digest_no_such_standby"
	if _, err := admin.Exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = '"+standby+"'"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	// A new session reads the server's settings when it starts: once one
	// sees the standby named, every session started after it does too.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		fresh, err := pgx.Connect(ctx, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		var names string
		err = fresh.QueryRow(ctx, "SHOW synchronous_standby_names").Scan(&names)
		fresh.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if names == standby {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s new sessions still read synchronous_standby_names = %q", names)
		}
	}

	// The control: an ordinary write now waits for the standby.
	writer := connect(t, srv.URL)
	writeCtx, cancelWrite := context.WithCancel(ctx)
	wrote := make(chan error, 1)
	go func() {
		_, err := writer.Exec(writeCtx, "INSERT INTO probe VALUES (1)")
		wrote <- err
	}()
	defer func() { cancelWrite(); <-wrote }()
	waitForSyncRep(t, admin, 1)

	dbs, stores := [2]*sqlstore.DB{}, [2]sharedlimit.Limit{}
	for i := range stores {
		s, err := postgres.Open(ctx, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		dbs[i], stores[i] = s, sharedlimit.Limit{Store: s, Name: "account"}
	}
	done := make(chan error, 1)
	callCtx, cancel := context.WithTimeout(ctx, 20*time.Second) // a commit that waits for the standby waits for ever
	defer cancel()
	var st engine.SharedState
	go func() {
		charge := engine.Charge{Cost: time.Second}
		if _, err := stores[0].Take(callCtx, charge, engine.Charge{}); err != nil {
			done <- err
			return
		}
		if err := stores[0].Learn(callCtx, 600, 0); err != nil {
			done <- err
			return
		}
		if err := stores[0].Pause(callCtx, time.Hour); err != nil {
			done <- err
			return
		}
		var err error
		st, err = stores[1].Take(callCtx, charge, engine.Charge{})
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatalf("the shared limit waited for the standby: %v", err)
	}
	if st.RPM != 600 || st.Paused < 59*time.Minute || st.Wait < st.Paused {
		t.Errorf("the second process saw %+v, want the limit of 600 learned and the hour's pause", st)
	}
	if n := syncRepWaiters(t, admin); n != 1 {
		t.Errorf("%d sessions wait for the standby after the limit's statements, want only the control's", n)
	}
	// The limit's own session still waits for its other commits.
	var setting string
	if err := dbs[1].SQL().QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Errorf("after the limit's statements the session's synchronous_commit is %q, want on", setting)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func syncRepWaiters(t *testing.T, admin *pgx.Conn) int {
	t.Helper()
	var n int
	if err := admin.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func waitForSyncRep(t *testing.T, admin *pgx.Conn, want int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); syncRepWaiters(t, admin) < want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s %d sessions wait for the standby, want %d: the server does not make commits wait", syncRepWaiters(t, admin), want)
		}
	}
}
