package sqlite

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// heldOpen reports whether a process (this one included) holds a lock on
// the database at path or on its -shm, as /proc/locks lists them: every
// connection to a WAL database holds one on the -shm for as long as it is
// open, and a writer in rollback mode one on the file. It reads no file
// of the database's: closing a descriptor of a file drops every lock this
// process holds on it, SQLite's own included. False when it cannot tell
// (no /proc, a lock held in another PID namespace, which /proc/locks does
// not show), so that the database is checked.
func heldOpen(path string) bool {
	var ids []string
	for _, p := range []string{path, path + "-shm"} {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			continue
		}
		dev := uint64(st.Dev)
		major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
		minor := dev&0xff | (dev>>12)&^uint64(0xff)
		ids = append(ids, fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino))
	}
	if len(ids) == 0 {
		return false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: POSIX  ADVISORY  READ 6921 fe:00:9989883 128 128", with
		// "->" after the number for a lock a process waits for.
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && fields[1] == "->" {
			fields = fields[1:]
		}
		if len(fields) < 6 {
			continue
		}
		for _, id := range ids {
			if fields[5] == id {
				return true
			}
		}
	}
	return false
}
