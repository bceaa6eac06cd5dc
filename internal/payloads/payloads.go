// Package payloads keeps the raw bodies of paid answers (the request as
// sent, the response as received) in an object store instead of the
// database: S3 (s3://bucket/prefix?region=...&endpoint=...), Google Cloud
// Storage (gs://), Azure Blob Storage (azblob://) or a directory
// (file:///dir), all through gocloud.dev/blob. Objects are named by their
// content, payloads/<sha256>.json.gz, so two processes writing the same
// one write the same bytes, and one written is never written again. The
// database keeps the object's URI; credentials come from the environment
// (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for S3) and never appear in
// a name, a URI or an error.
package payloads

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/fileblob"  // file:///dir
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://
	"gocloud.dev/gcerrors"
)

// MaxPayload bounds what Get reads back of one object: a store that
// answers with more than any request or answer digest sends is wrong.
const MaxPayload = 256 << 20

// Bucket is an opened object store payloads are written to and read from.
type Bucket struct {
	b    *blob.Bucket
	name string
}

// URLError is Open's error for a URL that names no store it can open:
// not a URL, a scheme gocloud.dev does not know, or options it refuses.
// It is the caller's mistake (a usage error), where a store that cannot
// be reached is the store's.
type URLError struct{ msg string }

func (e *URLError) Error() string { return e.msg }

// Open opens the store rawURL names and checks that it answers: a store
// that cannot be reached, or refuses digest's credentials, is an error
// naming it (without credentials) before anything is paid for.
func Open(ctx context.Context, rawURL string) (*Bucket, error) {
	u, err := url.Parse(rawURL)
	name := Redact(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, &URLError{fmt.Sprintf("payload store %s is not a URL. Try: s3://bucket/prefix?region=REGION, gs://bucket, azblob://container or file:///dir", name)}
	}
	prefix := ""
	if u.Scheme != "file" {
		// The bucket is the host; the path, a prefix within it.
		prefix = strings.Trim(u.Path, "/")
		u.Path = ""
	}
	u.User = nil
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, &URLError{fmt.Sprintf("payload store %s: %s. Try: s3://bucket/prefix?region=REGION, gs://bucket, azblob://container or file:///dir", name, scrub(err))}
	}
	if prefix != "" {
		b = blob.PrefixedBucket(b, prefix+"/")
	}
	ok, err := b.IsAccessible(ctx)
	if err == nil && !ok {
		err = errors.New("no such bucket")
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("payload store %s cannot be reached: %s. Try: check the bucket, its endpoint and the credentials in the environment", name, scrub(err))
	}
	return &Bucket{b: b, name: name}, nil
}

// Name is the store's URL without credentials or query: what messages
// show and what URIs start with.
func (b *Bucket) Name() string { return b.name }

// Close releases the store's connections.
func (b *Bucket) Close() error { return b.b.Close() }

// Key is the name of body's object within a store: payloads/, the
// SHA-256 of body in hex, .json.gz.
func Key(body []byte) string {
	sum := sha256.Sum256(body)
	return "payloads/" + hex.EncodeToString(sum[:]) + ".json.gz"
}

// Put stores body, gzipped, under Key(body) unless an object of that name
// exists already (it then holds the same bytes), and returns the object's
// URI.
func (b *Bucket) Put(ctx context.Context, body []byte) (string, error) {
	key := Key(body)
	uri := b.name + "/" + key
	exists, err := b.b.Exists(ctx, key)
	if err != nil {
		return "", b.fail("checking "+key, err)
	}
	if exists {
		return uri, nil
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(body)
	w.Close()
	// Not ContentEncoding gzip: an HTTP client would then unzip it on reading.
	if err := b.b.WriteAll(ctx, key, buf.Bytes(), &blob.WriterOptions{ContentType: "application/gzip"}); err != nil {
		return "", b.fail("writing "+key, err)
	}
	return uri, nil
}

// Get reads back the body stored under uri, which must name an object of
// this store.
func (b *Bucket) Get(ctx context.Context, uri string) ([]byte, error) {
	key, ok := strings.CutPrefix(uri, b.name+"/")
	if !ok || !strings.HasPrefix(key, "payloads/") {
		return nil, fmt.Errorf("payload %s is not in store %s. Try: --payloads with the store it was written to", uri, b.name)
	}
	r, err := b.b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, b.fail("reading "+key, err)
	}
	defer r.Close()
	z, err := gzip.NewReader(io.LimitReader(r, MaxPayload))
	if err != nil {
		return nil, fmt.Errorf("payload store %s: %s is not gzip: %v", b.name, key, err)
	}
	body, err := io.ReadAll(io.LimitReader(z, MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("payload store %s: %s is damaged: %v", b.name, key, err)
	}
	if len(body) > MaxPayload {
		return nil, fmt.Errorf("payload store %s: %s is larger than %d bytes", b.name, key, MaxPayload)
	}
	return body, nil
}

func (b *Bucket) fail(what string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("payload store %s: %s: not found", b.name, what)
	}
	return fmt.Errorf("payload store %s: %s: %s. Try: check the store is up and the credentials in the environment", b.name, what, scrub(err))
}

// Redact is rawURL as messages may show it: scheme, bucket and prefix,
// without user information or query (an endpoint may carry a password).
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return "(unreadable URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/")}).String()
}

// credentialEnv are the variables the stores' SDKs read secrets from.
var credentialEnv = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_CLIENT_SECRET"}

// scrub is err's message on one line, with any credential of the
// environment hidden: an SDK's error may quote what it was given.
func scrub(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	for _, v := range credentialEnv {
		if s := os.Getenv(v); len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "<"+v+">")
		}
	}
	return msg
}

// Count returns how many payload objects the store holds and their bytes:
// what a benchmark or a check of a run's objects reads.
func (b *Bucket) Count(ctx context.Context) (objects int, bytes int64, err error) {
	it := b.b.List(&blob.ListOptions{Prefix: "payloads/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return objects, bytes, nil
		}
		if err != nil {
			return objects, bytes, b.fail("listing payloads/", err)
		}
		if strings.HasSuffix(o.Key, ".json.gz") {
			objects++
			bytes += o.Size
		}
	}
}
