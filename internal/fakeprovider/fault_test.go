package fakeprovider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"
)

// Faults occur at about their rates, reproducibly for a seed, in each
// format's shape.
func TestFaultRates(t *testing.T) {
	const n = 600
	faults := FaultConfig{Status500: 0.1, Status5xx: 0.1, Malformed200: 0.1, Seed: 42}
	for _, format := range []string{OpenAI, Anthropic} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			overloaded := map[string]int{OpenAI: 503, Anthropic: 529}[format]
			run := func() ([]int, map[string]int) {
				srv := Start(t, Config{Faults: faults})
				var seq []int
				counts := map[string]int{}
				for range n {
					r := send(t, srv, format, "k", simple("hi", 10))
					switch {
					case r.status == 200 && json.Valid(r.body):
						decodeAnswer(t, format, r)
						counts["ok"]++
					case r.status == 200:
						counts["malformed"]++
						seq = append(seq, -1)
						continue
					case r.status == 500:
						e := decodeError(t, format, r)
						if e.typ != map[string]string{OpenAI: "server_error", Anthropic: "api_error"}[format] {
							t.Errorf("500: %+v", e)
						}
						counts["500"]++
					case r.status == overloaded:
						e := decodeError(t, format, r)
						if e.typ != map[string]string{OpenAI: "server_error", Anthropic: "overloaded_error"}[format] {
							t.Errorf("%d: %+v", overloaded, e)
						}
						counts["overloaded"]++
					default:
						t.Fatalf("status %d: %s", r.status, r.body)
					}
					seq = append(seq, r.status)
				}
				st := srv.Stats()
				if st.ServerErrors != counts["500"]+counts["overloaded"] || st.Malformed != counts["malformed"] || st.Succeeded != counts["ok"] {
					t.Errorf("stats %+v disagree with %v", st, counts)
				}
				return seq, counts
			}
			seq, counts := run()
			// Expected 60 each, standard deviation about 7.3.
			for _, k := range []string{"500", "overloaded", "malformed"} {
				if counts[k] < 30 || counts[k] > 90 {
					t.Errorf("%d %s in %d requests, want about 60", counts[k], k, n)
				}
			}
			if again, _ := run(); !slices.Equal(seq, again) {
				t.Errorf("the same seed gave a different sequence of faults")
			}
		})
	}
}

// A hung request ends when the client gives up; the server then closes
// without leaving a goroutine behind.
func TestHangEndsOnClientCancel(t *testing.T) {
	srv := Start(t, Config{Faults: FaultConfig{Hang: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := do(t, ctx, srv.Client(), http.MethodPost, srv.URL()+OpenAIPath, nil, encode(t, OpenAI, simple("hi", 5)))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if st := srv.Stats(); st.Hung != 1 || st.Succeeded != 0 {
		t.Errorf("stats %+v", st)
	}
	noHandlers(t) // the handler saw the client go, before any Close
	srv.Close()
}

// A hung request also ends when the server closes, and Close returns.
func TestHangEndsOnClose(t *testing.T) {
	srv := Start(t, Config{Faults: FaultConfig{Hang: 1}})
	errc := make(chan error, 1)
	go func() {
		_, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+AnthropicPath, headers(Anthropic, ""), encode(t, Anthropic, simple("hi", 5)))
		errc <- err
	}()
	for srv.Stats().Hung == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	srv.Close()
	if err := <-errc; err == nil {
		t.Errorf("the hung request got an answer")
	}
	noHandlers(t)
}

// A client giving up during Latency is counted, and nothing is answered.
func TestLatencyCancel(t *testing.T) {
	srv := Start(t, Config{Latency: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := do(t, ctx, srv.Client(), http.MethodPost, srv.URL()+OpenAIPath, nil, encode(t, OpenAI, simple("hi", 5))); err == nil {
		t.Fatal("answered within the latency")
	}
	for deadline := time.Now().Add(5 * time.Second); srv.Stats().Canceled == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the canceled request was never counted")
		}
	}
	if got := srv.Requests()[0].Status; got != 0 {
		t.Errorf("recorded status %d for a canceled request", got)
	}
	srv.Close()
	noHandlers(t)
}

// Latency holds each answer at least that long.
func TestLatency(t *testing.T) {
	srv := Start(t, Config{Latency: 30 * time.Millisecond})
	start := time.Now()
	decodeAnswer(t, OpenAI, send(t, srv, OpenAI, "k", simple("hi", 5)))
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
}

func TestStartRejectsBadFaults(t *testing.T) {
	for _, f := range []FaultConfig{{Status500: 1.5}, {Hang: -0.1}, {Status500: 0.6, Malformed200: 0.6}} {
		ft := &fatalRecorder{TB: t}
		func() {
			defer func() { recover() }() //nolint:errcheck // Fatalf stops the goroutine via panic here
			Start(ft, Config{Faults: f})
		}()
		if !ft.failed {
			t.Errorf("Start accepted %+v", f)
		}
	}
}

// fatalRecorder records Fatalf instead of failing the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}

func (f *fatalRecorder) Helper() {}
