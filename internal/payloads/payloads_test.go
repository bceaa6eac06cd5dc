package payloads

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"
)

// stores are the URLs every test runs against: a directory always, and
// the S3 server DIGEST_TEST_S3 names (started by .ci/s3) when it is set;
// DIGEST_REQUIRE_S3=1 turns its absence into a failure. Each test gets a
// prefix of its own within the bucket.
func stores(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"file": "file://" + filepath.ToSlash(t.TempDir())}
	if s3 := os.Getenv("DIGEST_TEST_S3"); s3 != "" {
		out["s3"] = WithPrefix(t, s3, strings.ReplaceAll(t.Name(), "/", "-"))
	} else if os.Getenv("DIGEST_REQUIRE_S3") == "1" {
		t.Error("DIGEST_TEST_S3 is not set and DIGEST_REQUIRE_S3=1. Try: export DIGEST_TEST_S3=$(.ci/s3 start DIR) $(.ci/s3 credentials DIR)")
	}
	return out
}

// WithPrefix puts prefix as the path of an s3:// URL.
func WithPrefix(t *testing.T, raw, prefix string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + prefix
	return u.String()
}

func TestPutStoresOneObjectPerBody(t *testing.T) {
	for kind, raw := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			b, err := Open(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			body := []byte(`{"messages":[{"role":"user","content":"hello"}]}`)
			uri, err := b.Put(ctx, body)
			if err != nil {
				t.Fatal(err)
			}
			again, err := b.Put(ctx, body)
			if err != nil {
				t.Fatal(err)
			}
			if uri != again || !strings.HasSuffix(uri, "/"+Key(body)) || !strings.HasPrefix(uri, Redact(raw)+"/payloads/") {
				t.Errorf("Put gave %q then %q; want one URI under %s ending in %s", uri, again, Redact(raw), Key(body))
			}
			other, err := b.Put(ctx, []byte("other"))
			if err != nil {
				t.Fatal(err)
			}
			if other == uri {
				t.Errorf("two bodies share the URI %s", uri)
			}
			n := 0
			iter := b.b.List(&blob.ListOptions{Prefix: "payloads/"})
			for {
				o, err := iter.Next(ctx)
				if err != nil {
					break
				}
				if !strings.HasSuffix(o.Key, ".attrs") {
					n++
				}
			}
			if n != 2 {
				t.Errorf("the store holds %d objects; want 2", n)
			}
			got, err := b.Get(ctx, uri)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("Get(%s) = %q, %v; want %q", uri, got, err, body)
			}
		})
	}
}

func TestPutNeverRewrites(t *testing.T) {
	for kind, raw := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			b, err := Open(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			body := []byte("request")
			// What another runner wrote first stays: Put only adds.
			if err := b.b.WriteAll(ctx, Key(body), []byte("written before"), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Put(ctx, body); err != nil {
				t.Fatal(err)
			}
			got, err := b.b.ReadAll(ctx, Key(body))
			if err != nil || string(got) != "written before" {
				t.Errorf("the object holds %q, %v after Put; want it untouched", got, err)
			}
		})
	}
}

func TestGetRefusesAnotherStore(t *testing.T) {
	ctx := context.Background()
	b, err := Open(ctx, "file://"+filepath.ToSlash(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Get(ctx, "s3://elsewhere/payloads/x.json.gz"); err == nil || !strings.Contains(err.Error(), "not in store") {
		t.Errorf("Get of another store's URI: %v; want an error saying so", err)
	}
	uri := b.Name() + "/" + Key([]byte("never stored"))
	if _, err := b.Get(ctx, uri); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Get of a missing object: %v; want not found", err)
	}
}

// closedPort is a port on 127.0.0.1 no one listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestOpenSaysWhichURLsNameNoStore: what is not a URL, a scheme no driver
// takes and options a driver refuses are URLErrors (the caller's mistake,
// exit 2 in cmd), each one line naming the store without its password.
func TestOpenSaysWhichURLsNameNoStore(t *testing.T) {
	for _, raw := range []string{"bucket", "ftp://host/x", "s3://bucket?nosuchoption=1", "s3://user:urlpass@bucket?nosuchoption=1", "file:///no/such/directory/anywhere"} {
		_, err := Open(context.Background(), raw)
		if bad := (*URLError)(nil); !errors.As(err, &bad) {
			t.Errorf("Open(%q): %v, want a URLError", raw, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "Try:") || strings.Contains(msg, "urlpass") {
			t.Errorf("Open(%q): %q, want one line with Try: and no password", raw, msg)
		}
	}
}

func TestOpenStopsOnAnUnreachableStoreWithoutCredentials(t *testing.T) {
	const access, secret = "AKIADIGESTTESTACCESS", "digest/test+secret/value/0123456789abcdef"
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	raw := "s3://bucket/prefix?endpoint=http://user:endpointpass@" + closedPort(t) + "&region=us-east-1&use_path_style=true"
	_, err := Open(context.Background(), raw)
	if err == nil {
		t.Fatal("Open of a store no one serves succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "s3://bucket/prefix") {
		t.Errorf("error %q: want one line naming s3://bucket/prefix", msg)
	}
	if bad := (*URLError)(nil); errors.As(err, &bad) {
		t.Errorf("error %q is a URLError: the URL is sound, the store is not there", msg)
	}
	for _, s := range []string{access, secret, "endpointpass"} {
		if strings.Contains(msg, s) {
			t.Errorf("error %q shows the credential %q", msg, s)
		}
	}
}

func TestOpenStopsOnARefusingStoreWithoutCredentials(t *testing.T) {
	raw := os.Getenv("DIGEST_TEST_S3")
	if raw == "" {
		if os.Getenv("DIGEST_REQUIRE_S3") == "1" {
			t.Fatal("DIGEST_TEST_S3 is not set and DIGEST_REQUIRE_S3=1")
		}
		t.Skip("DIGEST_TEST_S3 is not set: no S3 server to refuse")
	}
	const access, secret = "AKIADIGESTWRONGACCESS", "wrong/secret+value/0123456789abcdefghij"
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	_, err := Open(context.Background(), raw)
	if err == nil {
		t.Fatal("Open with credentials the server does not know succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, Redact(raw)) {
		t.Errorf("error %q: want one line naming %s", msg, Redact(raw))
	}
	for _, s := range []string{access, secret} {
		if strings.Contains(msg, s) {
			t.Errorf("error %q shows the credential %q", msg, s)
		}
	}
}

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"s3://bucket/prefix/?region=us-east-1&endpoint=http://u:p@host": "s3://bucket/prefix",
		"file:///var/lib/digest":                 "file:///var/lib/digest",
		"azblob://user:secret@container?sas=sig": "azblob://container",
		"gs://bucket":                            "gs://bucket",
		"no scheme":                              "(unreadable URL)",
	} {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q; want %q", raw, got, want)
		}
	}
}

// FuzzRedact checks that no URL's password or query survives Redact.
func FuzzRedact(f *testing.F) {
	f.Add("s3://user:pass@bucket/p?endpoint=http://a:b@c")
	f.Add("file:///dir")
	f.Fuzz(func(t *testing.T, raw string) {
		got := Redact(raw)
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if p, ok := u.User.Password(); ok && len(p) > 3 && strings.Contains(got, p) && !strings.Contains(u.Host+u.Path, p) {
			t.Errorf("Redact(%q) = %q shows the password", raw, got)
		}
		if strings.ContainsAny(got, "?@") && u.Scheme != "" && !strings.ContainsAny(u.Host+u.Path, "?@") {
			t.Errorf("Redact(%q) = %q keeps a query or user information", raw, got)
		}
	})
}
