package storetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/store"
)

// PayloadStores are the object stores the payload cases run against,
// by kind: a directory always, and the S3 server DIGEST_TEST_S3 names
// (.ci/s3 starts one) when it is set, under a prefix of the test's own;
// DIGEST_REQUIRE_S3=1 turns its absence into a failure.
func PayloadStores(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"file": "file://" + filepath.ToSlash(t.TempDir())}
	raw := os.Getenv("DIGEST_TEST_S3")
	if raw == "" {
		if os.Getenv("DIGEST_REQUIRE_S3") == "1" {
			t.Error("DIGEST_TEST_S3 is not set and DIGEST_REQUIRE_S3=1. Try: export DIGEST_TEST_S3=$(.ci/s3 start DIR) $(.ci/s3 credentials DIR)")
		}
		return out
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("DIGEST_TEST_S3: %v", err)
	}
	u.Path = fmt.Sprintf("/%s-%d", strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()), os.Getpid())
	out["s3"] = u.String()
	return out
}

// payloadUser is what a store that can keep payloads in an object store does.
type payloadUser interface {
	UsePayloads(*payloads.Bucket)
	ResultPayloads(ctx context.Context, key string) (request, response store.Payload, ok bool, err error)
}

func testPayloadsInObjectStore(t *testing.T, b Backend) {
	for kind, raw := range PayloadStores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			bucket, err := payloads.Open(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer bucket.Close()
			where := b.Fresh(t)
			s := open(t, b, where)
			u, ok := s.(payloadUser)
			if !ok {
				t.Fatalf("%T cannot keep payloads in an object store", s)
			}
			u.UsePayloads(bucket)
			const system = "a long system prompt the database must not keep"
			req := func(i int) []byte {
				return fmt.Appendf(nil, `{"System":%q,"Messages":[{"Role":"user","Content":"question %d"}]}`, system, i%3)
			}
			var answers []store.EvalResult
			var rows []store.RunResult
			for i := range 6 {
				k := fmt.Sprintf("key-%d", i)
				// Three distinct requests and two distinct answers: five objects.
				answers = append(answers, store.EvalResult{Key: k, Model: testModel, Request: req(i), Answer: fmt.Sprintf("answer %d", i%2), InputTokens: 10, OutputTokens: 2})
				rows = append(rows, store.RunResult{RunID: "run", Model: testModel, Item: k, Line: i, Key: k, Pass: true, Score: 1})
			}
			if err := s.StartRun(ctx, store.EvalRun{ID: "run", Dataset: "d", Models: []string{testModel}}); err != nil {
				t.Fatal(err)
			}
			if err := s.SaveEval(ctx, store.EvalWrite{Answers: answers, Rows: rows}); err != nil {
				t.Fatal(err)
			}
			if n, _, err := bucket.Count(ctx); err != nil || n != 5 {
				t.Errorf("the store holds %d objects (%v); want 5, one per distinct payload", n, err)
			}
			// Another process on the same database and store writes nothing new.
			other := open(t, b, where)
			other.(payloadUser).UsePayloads(bucket)
			if err := other.SaveEval(ctx, store.EvalWrite{Answers: answers}); err != nil {
				t.Fatal(err)
			}
			if n, _, err := bucket.Count(ctx); err != nil || n != 5 {
				t.Errorf("after a second process, the store holds %d objects (%v); want 5", n, err)
			}
			found, err := s.EvalResults(ctx, []string{"key-1"})
			if err != nil || found["key-1"].Answer != "answer 1" {
				t.Errorf("EvalResults = %+v, %v; want the answer from the database", found, err)
			}
			rq, rs, ok, err := u.ResultPayloads(ctx, "key-4")
			if err != nil || !ok || rq.URI == "" || rq.Body != nil || rs.URI == "" {
				t.Fatalf("ResultPayloads = %+v, %+v, %v, %v; want both in the object store", rq, rs, ok, err)
			}
			if body, err := bucket.Get(ctx, rq.URI); err != nil || string(body) != string(req(4)) {
				t.Errorf("the request's object holds %q, %v; want %q", body, err, req(4))
			}
			for row, err := range s.RunRows(ctx, "run", []string{testModel}, true) {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(row.Request), system) || !strings.Contains(string(row.Request), "question") {
					t.Errorf("the database keeps request %s; want only its user message", row.Request)
				}
			}
		})
	}
}

func testStoppedObjectStoreStoresNothing(t *testing.T, b Backend) {
	ctx := context.Background()
	dir := t.TempDir()
	bucket, err := payloads.Open(ctx, "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	s := newStore(t, b)
	s.(payloadUser).UsePayloads(bucket)
	kept := store.EvalResult{Key: "kept", Model: testModel, Request: []byte(`{}`), Answer: "kept"}
	if err := s.SaveEval(ctx, store.EvalWrite{Answers: []store.EvalResult{kept}}); err != nil {
		t.Fatal(err)
	}
	// A file where the objects' directory was: every write fails, as a
	// stopped server's would, whoever runs the test.
	if err := os.RemoveAll(filepath.Join(dir, "payloads")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "payloads"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lost := store.EvalResult{Key: "lost", Model: testModel, Request: []byte(`{"n":1}`), Answer: "lost"}
	err = s.SaveEval(ctx, store.EvalWrite{Answers: []store.EvalResult{lost}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), bucket.Name()) {
		t.Fatalf("SaveEval with a failing store: %v; want one line naming %s", err, bucket.Name())
	}
	found, err := s.EvalResults(ctx, []string{"kept", "lost"})
	if err != nil || len(found) != 1 || found["kept"].Answer != "kept" {
		t.Errorf("after the failure the database holds %+v, %v; want the earlier answer only", found, err)
	}
}
