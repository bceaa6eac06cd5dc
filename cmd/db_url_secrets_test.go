package cmd

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/iostreams"
)

// TestDatabasePasswordStaysHomeHoweverTheURLWritesIt gives every command
// that opens the database a PostgreSQL URL whose password a CI secret could
// well hold in a form the URL does not expect (in the query, with ?, #, /
// or @ unencoded, as generated passwords have them), from --db and from
// DIGEST_DB, with --verbose, and checks that each fails in one line with
// what to try and shows no part of the password. Before, the "not a
// PostgreSQL URL" error echoed such URLs whole, and pgx dialled a host
// made of the password's tail and named it.
func TestDatabasePasswordStaysHomeHoweverTheURLWritesIt(t *testing.T) {
	const tail = "Passw0rdXYZ" // in every password below
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := free.Addr().String()
	free.Close()
	urls := map[string]string{
		"query":  "postgres://ci@db.internal:notaport/digest?password=Pg" + tail,
		"?":      "postgres://ci:Pg?" + tail + "@db.internal:notaport/digest",
		"#":      "postgres://ci:Pg#" + tail + "@db.internal:notaport/digest",
		"/":      "postgres://ci:Pg/" + tail + "@" + closed + "/digest",
		"@":      "postgres://ci:Pg@" + tail + "@" + closed + "/digest",
		"digits": "postgresql://ci:2024/" + tail + "@" + closed + "/digest",
	}
	repo := fixture(t).Dir
	dataset := writeDataset(t, `{"input": "2+2", "ideal": "4"}`)
	commands := map[string][]string{
		"summarize": {"summarize", repo},
		"eval":      {"eval", dataset, "--models", "offline", "-f", "json"},
		"runs":      {"runs", "list"},
		"batches":   {"batches"},
	}
	for form, url := range urls {
		for name, args := range commands {
			for _, via := range []string{"--db", "DIGEST_DB"} {
				t.Run(fmt.Sprintf("%s/%s/%s", form, name, via), func(t *testing.T) {
					env := map[string]string{}
					full := append([]string{"--verbose"}, args...)
					if via == "DIGEST_DB" {
						env["DIGEST_DB"] = url
					} else {
						full = append([]string{"--db", url}, full...)
					}
					res := runWithEnv(t, env, full...)
					oneLineError(t, res, 2) // a URL pgx would misread is bad usage
					if strings.Contains(res.out+res.errOut, tail) {
						t.Errorf("the password shows: %q", res.errOut)
					}
				})
			}
		}
	}
}

// runWithEnv runs digest in this process with env as its whole
// environment and no --db of the harness's, so that DIGEST_DB is read.
func runWithEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	ios, out, errOut := iostreams.Test()
	f := NewFactory(ios, "v1.2.3-test")
	f.Getenv = func(k string) string { return env[k] }
	code := Execute(context.Background(), f, args)
	return result{code, out.String(), errOut.String()}
}
