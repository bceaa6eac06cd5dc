package sqlite

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRefusesWhatIsNotAFile: a named pipe given as the database made
// Open wait for ever for a writer, deaf to SIGTERM; a device would be
// written to. Each is refused before it is opened, as is a journal beside
// the database that is no file; a symbolic link to a database is followed.
func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	fifo := func(t *testing.T, path string) {
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skip("no named pipes here:", err)
		}
	}
	socket := func(t *testing.T, path string) {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Skip("no Unix socket here:", err)
		}
		t.Cleanup(func() { l.Close() })
	}
	device := func(t *testing.T, path string) {
		// /dev/null's numbers (1, 3): a device node in the test's own directory.
		if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, 1<<8|3); err != nil {
			t.Skip("cannot make a device node without privileges:", err)
		}
	}
	dir := func(t *testing.T, path string) { os.Mkdir(path, 0o700) }
	cases := []struct {
		name   string
		suffix string // "" for the database itself, or its journal's suffix
		make   func(t *testing.T, path string)
		want   string
	}{
		{"named pipe", "", fifo, "is a named pipe, not a database file"},
		{"socket", "", socket, "is a socket, not a database file"},
		{"device", "", device, "is a device, not a database file"},
		{"directory", "", dir, "is a directory, not a database file"},
		{"named pipe as -wal", "-wal", fifo, "digest.db-wal beside it is a named pipe"},
		{"named pipe as -shm", "-shm", fifo, "digest.db-shm beside it is a named pipe"},
		{"directory as -journal", "-journal", dir, "digest.db-journal beside it is a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A short directory: a Unix socket's path is limited to about 100 bytes.
			base, err := os.MkdirTemp("", "db")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			path := filepath.Join(base, "digest.db")
			c.make(t, path+c.suffix)
			before := dirNames(t, base)
			done := make(chan error, 1)
			go func() {
				s, err := Open(context.Background(), path)
				if err == nil {
					s.Close()
				}
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				// Let the blocked read go: a writer that closes at once.
				if w, err := os.OpenFile(path+c.suffix, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				t.Fatal("Open is still blocked on it after 20 s")
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Try: ") {
				t.Fatalf("err = %v, want it to say %q, then Try:", err, c.want)
			}
			if after := dirNames(t, base); !slices.Equal(after, before) {
				t.Errorf("Open left %v, where there was %v", after, before)
			}
		})
	}
	t.Run("symbolic link to a database", func(t *testing.T) {
		dir := t.TempDir()
		real := filepath.Join(dir, "real.db")
		os.WriteFile(real, digestDatabase(t), 0o600)
		link := filepath.Join(dir, "link.db")
		if err := os.Symlink(real, link); err != nil {
			t.Skip(err)
		}
		s := openStore(t, link)
		if got := lookup(t, s, key(""), hash(3)); len(got) != 1 {
			t.Fatalf("through the link: %d summaries, want 1", len(got))
		}
	})
}
