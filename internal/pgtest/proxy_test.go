package pgtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer answers every connection with what it reads, and after the
// client's half-close with "bye", then closes.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if _, err := io.Copy(c, c); err == nil {
					c.Write([]byte("bye"))
				}
			})
		}
	})
	return ln.Addr().String()
}

func startProxy(t *testing.T, target string, roundTrip time.Duration) *Proxy {
	t.Helper()
	p, err := StartProxy(target, roundTrip)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// A round trip through the proxy takes at least the latency it adds, and
// many chunks of every size, written while the answers are read, come back
// byte for byte in order; the client's half-close reaches the server after
// the data, and the server's last words after that still come back.
func TestProxyAddsTheRoundTripAndKeepsTheBytesInOrder(t *testing.T) {
	const roundTrip = 40 * time.Millisecond
	p := startProxy(t, echoServer(t), roundTrip)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < roundTrip || string(got) != "ping" {
		t.Fatalf("the round trip took %s and answered %q, want at least %s and %q", elapsed, got, roundTrip, "ping")
	}

	rng := rand.New(rand.NewPCG(1, 2))
	sent := make([]byte, 4<<20)
	for i := range sent {
		sent[i] = byte(rng.Uint32())
	}
	var writeErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		for rest := sent; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(100_000))
			if _, writeErr = c.Write(rest[:n]); writeErr != nil {
				return
			}
			rest = rest[n:]
		}
		writeErr = c.(*net.TCPConn).CloseWrite()
	})
	back, err := io.ReadAll(c)
	wg.Wait()
	if err != nil || writeErr != nil {
		t.Fatalf("reading: %v; writing: %v", err, writeErr)
	}
	want := append(append([]byte(nil), sent...), "bye"...)
	if !bytes.Equal(back, want) {
		i := 0
		for i < min(len(back), len(want)) && back[i] == want[i] {
			i++
		}
		t.Fatalf("%d bytes came back for %d sent and \"bye\": they differ from byte %d", len(back), len(sent), i)
	}
}

// Connections are independent: each gets its own connection to the
// target, and its own answers.
func TestProxyKeepsConnectionsApart(t *testing.T) {
	p := startProxy(t, echoServer(t), 2*time.Millisecond)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close()
			msg := strings.Repeat(string(rune('a'+i)), 1000)
			for range 20 {
				if _, err := c.Write([]byte(msg)); err != nil {
					errs[i] = err
					return
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(c, got); err != nil {
					errs[i] = err
					return
				}
				if string(got) != msg {
					errs[i] = errors.New("connection " + string(rune('a'+i)) + " got another's bytes: " + string(got[:10]))
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// Close cuts every connection, as a network gone away: a client waiting for
// an answer gets an error instead of waiting for ever, and a new one cannot
// connect.
func TestProxyCloseCutsConnections(t *testing.T) {
	p := startProxy(t, echoServer(t), 0)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(c, one); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a proxy that forgot the connection fails here, not the whole run
	if n, err := c.Read(one); err == nil {
		t.Fatalf("read %d bytes after Close; want the connection cut", n)
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the connection was still open a minute after Close")
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		c2.Close()
		t.Fatal("a new connection was accepted after Close")
	}
}

// A target that refuses connections closes the client's: it never hangs.
func TestProxyToNothingClosesTheClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := startProxy(t, addr, 0)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("read from a proxy to nothing: %v, want EOF", err)
	}
}

func TestProxyRefusesWhatItCannotUse(t *testing.T) {
	if _, err := StartProxy("127.0.0.1", time.Millisecond); err == nil || !strings.Contains(err.Error(), "Try:") {
		t.Errorf("a target without a port: %v, want an error with what to try", err)
	}
	if _, err := StartProxy("127.0.0.1:1", -time.Millisecond); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("a negative round trip: %v, want it refused", err)
	}
	p := startProxy(t, "127.0.0.1:1", 0)
	got, err := p.URL("postgres://u:secret@db.example:5432/digest?sslmode=disable")
	if want := "postgres://u:secret@" + p.Addr() + "/digest?sslmode=disable"; err != nil || got != want {
		t.Errorf("URL = %q, %v; want %q", got, err, want)
	}
	if _, err := p.URL("host=db.example dbname=digest"); err == nil {
		t.Error("a keyword/value string was rewritten; want an error")
	}
}

// BenchmarkProxyThroughput streams through a proxy adding 2 ms: the delay
// must cost no throughput (compare -bench 'ProxyThroughput/0s').
func BenchmarkProxyThroughput(b *testing.B) {
	for _, d := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(d.String(), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				io.Copy(io.Discard, c)
				c.Write([]byte{1})
			}()
			p, err := StartProxy(ln.Addr().String(), d)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			buf := make([]byte, 32<<10)
			b.SetBytes(int64(len(buf)))
			b.ResetTimer()
			for range b.N {
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			c.(*net.TCPConn).CloseWrite()
			if _, err := io.ReadFull(c, buf[:1]); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// Proxied puts the proxy in front of a real server: a session through it
// reaches the same database, and each statement's round trip gains the
// latency.
func TestProxiedReachesTheServerLater(t *testing.T) {
	const roundTrip = 20 * time.Millisecond
	direct := FreshDatabase(t)
	proxied := Proxied(t, direct, roundTrip)
	if proxied == direct {
		t.Fatalf("Proxied returned the server's own URL %s", direct)
	}
	conn := connectTo(t, proxied)
	ctx := context.Background()
	start := time.Now()
	var name string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < roundTrip {
		t.Errorf("a statement through the proxy took %s, want at least the %s it adds", elapsed, roundTrip)
	}
	if want := databaseName(t, direct); name != want {
		t.Errorf("through the proxy the session reached %s, want %s", name, want)
	}
}
