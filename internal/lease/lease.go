// Package lease is how digest processes sharing one database keep from
// paying twice for the same work: before sending a request, a process
// claims its key in the store's leases table; the others skip the key while
// the claim is live and read the result from the store once it is there.
// Summarize (per commit) and eval (per request key) both claim through
// Claim.
package lease

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// Default is how long other processes wait for work whose claiming process
// died before they do it themselves, when that process was on another
// machine (a dead process of this machine is noticed at once).
const Default = 5 * time.Minute

// NewOwner names this process in its leases: machine, process and a random
// part, since a process id alone repeats across machines and restarts.
func NewOwner() string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%x", Machine(), os.Getpid(), b)
}

// Machine names the process table this process sees: the host name and, on
// Linux, the PID namespace. Containers that share a host name (CI runners
// often set one) each number their processes apart, and a process id from
// another one must never be taken for a dead process of this one.
func Machine() string {
	host, _ := os.Hostname()
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		host += "~" + strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
	}
	return host
}

// Claim takes the lease on key for owner until ttl from now, or takes it
// over from a process of this machine that died holding it: a rerun after a
// crash need not wait for the dead run's leases to expire. It reports
// whether owner holds the lease now.
//
// A caller that looked the key's result up before claiming must look again
// after winning: the previous holder may have stored the result and let the
// lease go in between, and sending then would pay twice.
func Claim(ctx context.Context, st store.ClaimStore, key, owner string, ttl time.Duration) (bool, error) {
	ok, err := st.Claim(ctx, key, owner, ttl)
	if ok || err != nil {
		return ok, err
	}
	holder, held, err := st.LeaseOwner(ctx, key)
	if err != nil {
		return false, err
	}
	if !held {
		// Released between the two statements: claim it afresh.
		return st.Claim(ctx, key, owner, ttl)
	}
	if !dead(holder, owner) {
		return false, nil
	}
	return st.TakeOver(ctx, key, holder, owner, ttl)
}

// ClaimAll is Claim for each of keys, in a few statements whatever their
// number; won[i] reports whether owner holds keys[i] now. The keys it
// loses are looked at together: those whose holder died on this machine
// are taken over (one statement each, as Claim does), those let go since
// the claim are claimed again.
func ClaimAll(ctx context.Context, st store.ClaimStore, keys []string, owner string, ttl time.Duration) ([]bool, error) {
	won, err := st.ClaimAll(ctx, keys, owner, ttl)
	if err != nil {
		return nil, err
	}
	var lost []string
	for i, ok := range won {
		if !ok {
			lost = append(lost, keys[i])
		}
	}
	if len(lost) == 0 {
		return won, nil
	}
	holders, err := st.LeaseHolders(ctx, lost)
	if err != nil {
		return nil, err
	}
	var free []string
	taken := map[string]bool{}
	for _, k := range lost {
		holder, held := holders[k]
		switch {
		case !held:
			free = append(free, k)
		case dead(holder, owner):
			if taken[k], err = st.TakeOver(ctx, k, holder, owner, ttl); err != nil {
				return nil, err
			}
		}
	}
	if len(free) > 0 {
		// Released between the two statements: claimed afresh.
		again, err := st.ClaimAll(ctx, free, owner, ttl)
		if err != nil {
			return nil, err
		}
		for i, k := range free {
			taken[k] = taken[k] || again[i]
		}
	}
	for i, k := range keys {
		won[i] = won[i] || taken[k]
	}
	return won, nil
}

// Sweep deletes the leases of processes of this machine that died holding
// them, with any expired lease. Claim takes such leases over anyway; but a
// process killed between storing a result and letting its lease go leaves
// a lease on work nobody will claim again, which would stay forever. me is
// the owner this process claims as.
func Sweep(ctx context.Context, st store.ClaimStore, me string, log *slog.Logger) {
	owners, err := st.LeaseOwners(ctx)
	for _, o := range owners {
		if dead(o, me) {
			err = errors.Join(err, st.DropLeases(ctx, o))
		}
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("could not clear the leases of dead processes; they expire on their own", "error", err)
	}
}

// Keep renews owner's leases every third of ttl until ctx ends or the
// returned stop is called: a request that waits long for its turn under a
// rate limit, or is retried for minutes, keeps its key, and only a process
// that died (and so stopped renewing) lets its leases expire.
func Keep(ctx context.Context, st store.ClaimStore, owner string, ttl time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	warn := NewWarner(log)
	go func() {
		defer close(done)
		tick := time.NewTicker(max(ttl/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := st.Renew(ctx, owner, ttl); err != nil && ctx.Err() == nil {
					warn.Warn("could not renew leases; another process may take them over once they expire", err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// Warner logs the failures of lease work once per cause. Leases fail
// together: on a full disk every renewal and every release failed alike,
// and the same warning, 24 times over, buried the error that said what to
// do.
type Warner struct {
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool // warning and error text
}

// NewWarner makes a Warner logging to log; one serves a run.
func NewWarner(log *slog.Logger) *Warner {
	return &Warner{log: log, seen: map[string]bool{}}
}

// Warn logs msg with err and args, unless msg was logged with an error of
// the same text before: args (which commit, which key) are left out of the
// comparison, as they differ from one failure of the same cause to the next.
func (w *Warner) Warn(msg string, err error, args ...any) {
	cause := msg + "\x00" + err.Error()
	w.mu.Lock()
	seen := w.seen[cause]
	w.seen[cause] = true
	w.mu.Unlock()
	if !seen {
		w.log.Warn(msg, append(slices.Clip(args), "error", err)...)
	}
}

// Poll is how often a process waiting for work another holds looks for its
// result: often enough that a short lease is noticed soon after it
// expires, and at most once a second.
func Poll(ttl time.Duration) time.Duration {
	return min(max(ttl/20, 20*time.Millisecond), time.Second)
}

// dead reports whether a lease owner named by NewOwner is a process of this
// machine that no longer runs: its leases need not be waited out. Owners on
// other machines, or not of NewOwner's form, are taken as alive. An owner
// with this process's id that is not me is dead too: a process runs one
// owner, so that one was a process whose id this one was given after it
// died (ids wrap at 32,768 on many systems), or an earlier run in this one.
func dead(owner, me string) bool {
	host, rest, ok := strings.Cut(owner, "/")
	if !ok || host != Machine() {
		return false
	}
	pidText, _, _ := strings.Cut(rest, "/")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return owner != me
	}
	return !processAlive(pid)
}
