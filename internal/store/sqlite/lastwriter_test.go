package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// holdOpenEnv names the database a copy of this test binary opens and
// holds open, as a digest process does mid-run, until it is killed.
const holdOpenEnv = "DIGEST_TEST_SQLITE_HOLD_OPEN"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdOpenEnv); path != "" {
		s, err := Open(context.Background(), path)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		if _, err := s.Runs(context.Background()); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("open")
		time.Sleep(time.Minute) // killed long before; never left behind
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdOpen starts a process holding the database at path open, and
// returns once it has opened it.
func holdOpen(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdOpenEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "open\n" {
		t.Fatalf("the process holding %s open said %q", path, line)
	}
	return cmd
}

// TestOpenReadsEveryPageOnlyAfterAnUncleanShutdown: opening a database
// costs the same at 10 MB and at 10 GB (BenchmarkOpen), because the pages
// past its header and schema are read only when the last process to have
// it open did not close it. A damaged page no command reads is then found
// by the full check, or by the first open after a process is killed;
// a -wal held by a live process, or by this one, is no unclean shutdown.
func TestOpenReadsEveryPageOnlyAfterAnUncleanShutdown(t *testing.T) {
	ctx := context.Background()
	real := digestDatabase(t)
	damaged := damagePage(real, len(real)/4096/2)
	dir := t.TempDir()
	path := filepath.Join(dir, "digest.db")
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}

	// Closed cleanly: the header and the schema are whole, so it opens.
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("a database closed cleanly, damaged on a page no open reads: %v", err)
	}
	s.Close()
	if err := Check(ctx, path); err == nil || !strings.Contains(err.Error(), "failed its integrity check") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check = %v, want one line saying it failed its integrity check", err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"digest.db"}) {
		t.Errorf("after Open, Close and Check the folder holds %v, want the database alone", got)
	}

	// Held open by a live process: its -wal is no sign of a crash.
	holder := holdOpen(t, path)
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the live process keeps no -wal: %v", err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("the -wal of a live process was taken for an unclean shutdown: %v", err)
	}
	s.Close()

	// Killed: what it leaves is, and the damage is found before anything
	// writes to the file.
	holder.Process.Kill()
	holder.Wait()
	files := map[string][]byte{}
	for _, name := range []string{"digest.db", "digest.db-wal", "digest.db-shm"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("after a kill: %v", err)
		}
		files[name] = b
	}
	checkRefusedAsItWas(t, path, files, "digest.db-wal left by a process that did not close it")

	// This process's own connection is no crash either (Linux: elsewhere
	// a -wal is always checked for).
	if runtime.GOOS != "linux" {
		return
	}
	intact := filepath.Join(t.TempDir(), "digest.db")
	os.WriteFile(intact, real, 0o600)
	first := openStore(t, intact)
	if why := uncleanShutdown(intact); why != "" {
		t.Errorf("with this process's own store open: %s", why)
	}
	first.Close()
	os.WriteFile(intact+"-wal", nil, 0o600) // as a kill before any write leaves it
	if why := uncleanShutdown(intact); !strings.Contains(why, "digest.db-wal left by a process that did not close it") {
		t.Errorf("an empty -wal no process holds: %q, want it taken for an unclean shutdown", why)
	}
}

// TestCheckSaysWhatIsWrong: the full check (digest cache check) passes a
// whole database, leaving nothing beside it, and names what is wrong with
// any other in one line, reading only.
func TestCheckSaysWhatIsWrong(t *testing.T) {
	ctx := context.Background()
	real := digestDatabase(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "digest.db")
	os.WriteFile(path, real, 0o600)
	if err := Check(ctx, path); err != nil {
		t.Fatalf("a whole database: %v", err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"digest.db"}) {
		t.Errorf("after the check the folder holds %v, want the database alone", got)
	}
	// Beside a live writer, its -wal is read too.
	s := openStore(t, path)
	save(t, s, store.Summary{SummaryKey: key(hash(2000)), Text: "in the WAL"})
	if err := Check(ctx, path); err != nil {
		t.Errorf("beside a live writer: %v", err)
	}
	s.Close()

	for _, c := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"damaged mid-file", damagePage(real, len(real)/4096/2), "failed its integrity check: "},
		{"damaged last page", damagePage(real, len(real)/4096-1), "failed its integrity check: "},
		{"truncated", real[:len(real)/2], "(truncated: "},
		{"not SQLite", []byte("my notes\n"), "no SQLite header"},
		{"empty", nil, "is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "digest.db")
			os.WriteFile(path, c.content, 0o600)
			err := Check(ctx, path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Try: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Check = %v, want one line saying %q, then Try:", err, c.want)
			}
			if got, _ := os.ReadFile(path); string(got) != string(c.content) {
				t.Error("the check changed the file")
			}
		})
	}
	if err := Check(ctx, filepath.Join(t.TempDir(), "none.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a database that is not there: %v", err)
	}
}
