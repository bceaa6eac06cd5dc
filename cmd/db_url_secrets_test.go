package cmd

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/iostreams"
)

// TestDatabasePasswordStaysHomeHoweverTheURLWritesIt gives the commands
// that open the database a PostgreSQL URL whose password a CI secret could
// well hold in a form the URL does not expect (in the query, with ?, #, /
// or @ unencoded, as generated passwords have them), from --db and from
// DIGEST_DB, with --verbose, and checks that each fails in one line with
// what to try and shows no part of the password. Before, the "not a
// PostgreSQL URL" error echoed such URLs whole, and pgx dialled a host
// made of the password's tail and named it. Every form's error is
// internal/store/postgres's TestOpenNeverShowsAPasswordHowEverItIsWritten.
func TestDatabasePasswordStaysHomeHoweverTheURLWritesIt(t *testing.T) {
	const tail = "Passw0rdXYZ" // in every password below
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := free.Addr().String()
	free.Close()
	// Each command meets a form in the query or with ? # unencoded, and one
	// with / or @ that would move it into the host or database name.
	tail2 := tail + "@" + closed + "/digest"
	for args, urls := range map[string][2]string{
		"summarize " + fixture(t).Dir: {"postgres://ci@db.internal:notaport/digest?password=Pg" + tail, "postgres://ci:Pg/" + tail2},
		"eval " + writeDataset(t, `{"input": "2+2", "ideal": "4"}`) + " --models offline -f json": {"postgres://ci:Pg?" + tail + "@db.internal:notaport/digest", "postgres://ci:Pg@" + tail2},
		"runs list": {"postgres://ci:Pg#" + tail + "@db.internal:notaport/digest", "postgresql://ci:2024/" + tail2},
		"batches":   {"postgres://ci:Pg?" + tail + "@db.internal:notaport/digest", "postgres://ci:Pg@" + tail2},
	} {
		for i, via := range []string{"--db", "DIGEST_DB"} {
			for _, url := range urls {
				env, full := map[string]string{}, append([]string{"--verbose"}, strings.Fields(args)...)
				if i == 0 {
					full = append([]string{"--db", url}, full...)
				} else {
					env["DIGEST_DB"] = url
				}
				res := runWithEnv(t, env, full...)
				oneLineError(t, res, 2) // a URL pgx would misread is bad usage
				if strings.Contains(res.out+res.errOut, tail) {
					t.Errorf("%s via %s: the password shows: %q", args, via, res.errOut)
				}
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
