package fakeprovider

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"time"
)

// New runs a fake server until Close, for a program that is not a test
// (the .ci benchmarks); a test calls Start, which closes it when the test
// ends. A Config that cannot be served (negative figures, fault
// probabilities outside 0..1 or adding up to more than 1, an unknown
// Limiter) is an error.
func New(cfg Config) (*Server, error) {
	if cfg.Window < 0 || cfg.RPM < 0 || cfg.TPM < 0 || cfg.Latency < 0 {
		return nil, fmt.Errorf("fakeprovider: negative Window, RPM, TPM or Latency in %+v", cfg)
	}
	if cfg.Window == 0 {
		cfg.Window = time.Minute
	}
	if cfg.Limiter != SlidingWindow && cfg.Limiter != TokenBucket {
		return nil, fmt.Errorf("fakeprovider: unknown %v", cfg.Limiter)
	}
	for _, p := range []float64{cfg.Faults.Status500, cfg.Faults.Status5xx, cfg.Faults.Malformed200, cfg.Faults.Hang} {
		if p < 0 || p > 1 {
			return nil, fmt.Errorf("fakeprovider: fault probability %v is outside 0..1", p)
		}
	}
	if s := cfg.Faults.sum(); s > 1+1e-9 {
		return nil, fmt.Errorf("fakeprovider: fault probabilities add up to %v, more than 1", s)
	}
	s := &Server{cfg: cfg, now: cfg.clock, count: cfg.CountTokens, done: make(chan struct{})}
	if s.now == nil {
		s.now = time.Now
	}
	if s.count == nil {
		s.count = quarterRunes
	}
	s.start = s.now()
	s.stats.Window = cfg.Window
	if cfg.Limiter == TokenBucket {
		s.limiter = newBucket(cfg.Window, cfg.RPM, cfg.TPM)
	} else {
		s.limiter = newSlidingWindow(cfg.Window, cfg.RPM, cfg.TPM)
	}
	s.faults = rand.New(rand.NewPCG(cfg.Faults.Seed, 0x6661756c7473)) // "faults"
	s.shuffles = rand.New(rand.NewPCG(cfg.Faults.Seed, 0x73687566666c65))
	s.batches = batchState{files: map[string][]byte{}, byID: map[string]*fakeBatch{}}
	s.batchMux = s.newBatchMux()
	s.ts = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s, nil
}
