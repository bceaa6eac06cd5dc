package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBadDatabasePoolIsAUsageError: a pool size that is not a whole number
// from 1 to 1000, in --db (pool_max_conns) or DIGEST_DB_POOL, stops a real
// digest before it connects, exit 2, in one line naming it with what to
// try and without the password.
func TestBadDatabasePoolIsAUsageError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	const password = "Pg5ecretXYZ"
	// Nothing listens there: a digest that got as far as connecting would
	// say the server cannot be reached, exit 1.
	server := "postgres://ci:" + password + "@127.0.0.1:1/digest?sslmode=disable&connect_timeout=2"
	cases := []struct {
		name, db, env, want string
	}{
		{"zero in the URL", server + "&pool_max_conns=0", "", "pool_max_conns"},
		{"a word in a connection string", "host=127.0.0.1 port=1 dbname=digest password=" + password + " pool_max_conns=all", "", "pool_max_conns"},
		{"a word in the environment", server, "lots", "DIGEST_DB_POOL"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--db", tt.db, "runs", "list")
			cmd.Env = append(os.Environ(), "DIGEST_DB_POOL="+tt.env)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("exit %v, want 2; stderr %q", err, stderr.String())
			}
			msg := strings.TrimSpace(stderr.String())
			if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "from 1 to 1000") || !strings.Contains(msg, "Try: ") {
				t.Errorf("stderr %q is not one line naming %s, what it takes and what to try", msg, tt.want)
			}
			if strings.Contains(msg, password) {
				t.Errorf("stderr %q shows the password", msg)
			}
		})
	}
}
