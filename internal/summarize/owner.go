package summarize

import (
	"os"
	"strconv"
	"strings"
)

// ownerDead reports whether a lease owner named by NewOwner is a process of
// this machine that no longer runs: its leases need not be waited out.
// Owners on other machines, or not of NewOwner's form, are taken as alive.
func ownerDead(owner string) bool {
	host, rest, ok := strings.Cut(owner, "/")
	me, _ := os.Hostname()
	if !ok || host != me {
		return false
	}
	pidText, _, _ := strings.Cut(rest, "/")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return !processAlive(pid)
}
