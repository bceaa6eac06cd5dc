package pgtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of one address that adds a
// fixed latency, as a database in another region would: every chunk read
// from one side is written to the other half the round trip after it was
// read, so that a request and its answer gain the whole round trip. Chunks
// keep their order, and reading goes on while earlier chunks wait their
// turn, so the delay costs no throughput: a connection carries as much as
// it would without the proxy, each byte later. Tests, benchmarks and the
// .ci benchmark programs use it; nothing in it needs a test to run.
type Proxy struct {
	ln     net.Listener
	target string
	up     time.Duration // client to target
	down   time.Duration // target to client

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// chunkQueue is how many chunks a direction holds on their way before its
// reader waits: enough that a fast sender at a long delay is not slowed,
// and a bound on the memory a stalled receiver can cost.
const chunkQueue = 4096

// readSize is the most one read takes from a connection.
const readSize = 64 << 10

// StartProxy listens on 127.0.0.1 on a free port and forwards every
// connection to target (host:port), adding roundTrip to each round trip:
// half of it on the way there, the rest on the way back. A roundTrip of 0
// forwards at once.
func StartProxy(target string, roundTrip time.Duration) (*Proxy, error) {
	if roundTrip < 0 {
		return nil, fmt.Errorf("pgtest: a proxy's round trip of %s is negative. Try: 0 or more", roundTrip)
	}
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("pgtest: the proxy's target %q is not HOST:PORT. Try: 127.0.0.1:5432", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("pgtest: a port for the proxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target, up: roundTrip / 2, down: roundTrip - roundTrip/2, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Proxied starts a proxy adding roundTrip in front of the server of
// databaseURL (a postgres:// URL), closed when the test ends, and returns
// the URL that reaches the server through it.
func Proxied(t testing.TB, databaseURL string, roundTrip time.Duration) string {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil || u.Host == "" {
		t.Fatalf("pgtest: %q is not a URL with a host:port to proxy. Try: postgres://USER@127.0.0.1:5432/DB", databaseURL)
	}
	p, err := StartProxy(u.Host, roundTrip)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	proxied, err := p.URL(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	return proxied
}

// Addr is where the proxy listens: 127.0.0.1:PORT.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is databaseURL (a postgres:// URL naming the proxy's target or any
// other host) with its host:port replaced by the proxy's.
func (p *Proxy) URL(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("pgtest: %q is not a URL with a host:port to replace. Try: postgres://USER@127.0.0.1:5432/DB", databaseURL)
	}
	u.Host = p.Addr()
	return u.String(), nil
}

// Close stops accepting, cuts every connection at once, as a network that
// went away would, and returns once every goroutine of the proxy has ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// track remembers c so that Close can cut it; false when the proxy is
// closed already, and c is closed then.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) forget(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	c.Close()
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		if !p.track(client) {
			return
		}
		p.wg.Go(func() { p.serve(client) })
	}
}

// serve joins one client to a connection of its own to the target. The
// target is dialled without delay: the latency is added to what flows, so
// a connection's opening costs the round trips of its handshake, as it
// would across the network.
func (p *Proxy) serve(client net.Conn) {
	defer p.forget(client)
	server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		return // the client sees the connection closed, as if refused
	}
	if !p.track(server) {
		return
	}
	defer p.forget(server)
	var both sync.WaitGroup
	both.Go(func() { forward(server, client, p.up) })
	both.Go(func() { forward(client, server, p.down) })
	both.Wait()
}

// chunk is bytes read, and when they are due at the other side.
type chunk struct {
	b   []byte
	due time.Time
}

// forward copies src to dst, each chunk delay after it was read. When src
// ends cleanly (EOF), dst's writing half is closed once every chunk is
// written, so that a half-close reaches the other side after the data;
// when either side fails, both are closed, which ends the other direction.
func forward(dst, src net.Conn, delay time.Duration) {
	queue := make(chan chunk, chunkQueue)
	var reader sync.WaitGroup
	reader.Go(func() {
		defer close(queue)
		buf := make([]byte, readSize)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				queue <- chunk{b: append([]byte(nil), buf[:n]...), due: time.Now().Add(delay)}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					dst.Close()
				}
				return
			}
		}
	})
	failed := false
	for c := range queue {
		if failed {
			continue // drained, so that the reader never blocks
		}
		if wait := time.Until(c.due); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := dst.Write(c.b); err != nil {
			failed = true
			src.Close() // ends the reader
			dst.Close()
		}
	}
	reader.Wait()
	if !failed {
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
	}
}
