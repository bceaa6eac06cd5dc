package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/store/storetest"

	_ "modernc.org/sqlite"
)

// payloadRows counts the database's payload rows, those without an
// object, and the bytes their bodies take.
func payloadRows(t *testing.T, db string) (rows, inDB int, bytes int64) {
	t.Helper()
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRow(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN uri IS NULL THEN 1 ELSE 0 END), 0), COALESCE(SUM(LENGTH(gz)), 0) FROM payloads`).Scan(&rows, &inDB, &bytes); err != nil {
		t.Fatal(err)
	}
	return rows, inDB, bytes
}

// A run with --payloads leaves each distinct payload in the object store
// once and none in the database; a second process pays nothing again;
// `runs payloads` reads the bodies back; a store that stops stops the run
// with one line that shows no credential, keeping what was stored.
func TestEvalPayloadsInObjectStore(t *testing.T) {
	for kind, raw := range storetest.PayloadStores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t)
			data := sums(t)
			res := h.run(ctx, "eval", data, "--models", "test:a", "--payloads", raw, "-f", "json")
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.errOut)
			}
			calls := h.calls.Load()
			if calls != 10 {
				t.Fatalf("%d calls; want 10", calls)
			}
			rows, inDB, _ := payloadRows(t, h.db)
			bucket, err := payloads.Open(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer bucket.Close()
			objects, _, err := bucket.Count(ctx)
			if err != nil || inDB != 0 || objects != rows || rows < 11 {
				t.Errorf("%d payload rows, %d without an object; %d objects (%v): want every distinct payload (10 requests and their answers) as one object", rows, inDB, objects, err)
			}
			// Another process, given the store by DIGEST_PAYLOADS, pays nothing.
			h.env["DIGEST_PAYLOADS"] = raw
			res = h.run(ctx, "eval", data, "--models", "test:a", "-f", "json")
			if res.code != 0 || h.calls.Load() != calls {
				t.Fatalf("rerun: exit %d, %d calls more: %s", res.code, h.calls.Load()-calls, res.errOut)
			}
			if again, _, _ := bucket.Count(ctx); again != objects {
				t.Errorf("the rerun left %d objects; want %d", again, objects)
			}
			var rep struct {
				RunID string `json:"run_id"`
			}
			json.Unmarshal([]byte(res.out), &rep)
			res = h.run(ctx, "runs", "payloads", rep.RunID, "2")
			if res.code != 0 {
				t.Fatalf("runs payloads: exit %d: %s", res.code, res.errOut)
			}
			var got runPayload
			if err := json.Unmarshal([]byte(res.out), &got); err != nil || got.RequestURI == "" || !strings.Contains(string(got.Request), "What is 3 + 1?") || got.Response == "" {
				t.Errorf("runs payloads: %+v, %v; want the request and answer of line 2 from the store", got, err)
			}

			// The store stops answering: a new item's answer cannot be kept.
			const access, secret = "AKIADIGESTSTOPPEDTEST", "stopped/secret+0123456789abcdefghijk"
			t.Setenv("AWS_ACCESS_KEY_ID", access)
			t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
			stopped := raw
			if kind == "s3" {
				u, _ := url.Parse(raw)
				q := u.Query()
				q.Set("endpoint", "http://"+closedAddr(t))
				u.RawQuery = q.Encode()
				stopped = u.String()
			} else {
				dir := strings.TrimPrefix(raw, "file://")
				os.RemoveAll(filepath.Join(dir, "payloads"))
				os.WriteFile(filepath.Join(dir, "payloads"), nil, 0o600)
			}
			more := writeDataset(t, `{"id": "new", "prompt": "What is 40 + 2?", "expected": "42", "assert": [{"type": "numeric"}]}`)
			res = h.run(ctx, "eval", more, "--models", "test:a", "--payloads", stopped)
			msg := strings.TrimSpace(res.errOut)
			t.Logf("stopped store: exit %d: %s", res.code, msg)
			if res.code == 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, payloads.Redact(raw)) {
				t.Errorf("with a stopped store: exit %d, %q; want a failure in one line naming %s", res.code, msg, payloads.Redact(raw))
			}
			for _, s := range []string{access, secret} {
				if strings.Contains(res.errOut+res.out, s) {
					t.Errorf("the failure shows the credential %q: %s", s, msg)
				}
			}
			if after, _, _ := payloadRows(t, h.db); after < rows {
				t.Errorf("%d payload rows after the failure; want the %d stored before kept", after, rows)
			}
		})
	}
}

// closedAddr is an address on 127.0.0.1 no one listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
