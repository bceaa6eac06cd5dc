package eval

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/store/storetest"
)

// payloadRows counts the database's payload rows and those without an
// object.
func payloadRows(t *testing.T, db string) (rows, inDB int) {
	t.Helper()
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRow(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN uri IS NULL THEN 1 ELSE 0 END), 0) FROM payloads`).Scan(&rows, &inDB); err != nil {
		t.Fatal(err)
	}
	return rows, inDB
}

// openPayloads opens the object store raw names, closed with the test.
func openPayloads(t *testing.T, raw string) *payloads.Bucket {
	t.Helper()
	b, err := payloads.Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestPayloadsGoToTheObjectStore: a run on a database given an object
// store (--payloads; an S3 server too when DIGEST_TEST_S3 names one)
// leaves each distinct payload there once and none in the database;
// another process on the same database and store pays nothing again and
// writes no object. A store that stops taking objects stops the run with
// one line naming it, keeping what was stored before. (A store that cannot
// be reached at all, and the credentials kept out of its error, are
// payloads' TestOpenStopsOnAnUnreachableStoreWithoutCredentials.)
func TestPayloadsGoToTheObjectStore(t *testing.T) {
	for kind, raw := range storetest.PayloadStores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			r := newTestRun(t)
			r.models = r.models[:1]
			bucket := openPayloads(t, raw)
			r.st.(interface{ UsePayloads(*payloads.Bucket) }).UsePayloads(bucket)
			r.run(t, sums(10), Options{})
			rows, inDB := payloadRows(t, r.st.Path())
			objects, _, err := bucket.Count(ctx)
			if err != nil || inDB != 0 || objects != rows || rows < 11 {
				t.Errorf("%d payload rows, %d without an object; %d objects (%v): want every distinct payload (10 requests and their answers) as one object", rows, inDB, objects, err)
			}
			other, err := sqlite.Open(ctx, r.st.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			other.UsePayloads(openPayloads(t, raw))
			r.st = other
			if out, _ := r.run(t, sums(10), Options{}); r.calls[0].Load() != 10 || out.Requests != 0 {
				t.Errorf("another process asked again: %d calls in all, %d requests", r.calls[0].Load(), out.Requests)
			}
			if again, _, _ := bucket.Count(ctx); again != objects {
				t.Errorf("the rerun left %d objects; want %d", again, objects)
			}
			if kind != "file" {
				return
			}
			// A file where the objects' folder was: every write fails, as a
			// stopped server's would.
			dir := strings.TrimPrefix(raw, "file://")
			os.RemoveAll(filepath.Join(dir, "payloads"))
			os.WriteFile(filepath.Join(dir, "payloads"), nil, 0o600)
			_, err = Run(ctx, Options{Dataset: "more.jsonl", Source: strings.NewReader(`{"id": "new", "prompt": "What is 40+2?", "expected": "42"}` + "\n"),
				Models: r.models, Tokenizer: r.tok, Store: other, Concurrency: 1, Scorer: &score.Scorer{}})
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), payloads.Redact(raw)) {
				t.Errorf("with a stopped store: %v; want a failure in one line naming %s", err, payloads.Redact(raw))
			}
			if after, _ := payloadRows(t, other.Path()); after < rows {
				t.Errorf("%d payload rows after the failure; want the %d stored before kept", after, rows)
			}
		})
	}
}
