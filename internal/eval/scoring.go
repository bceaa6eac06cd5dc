package eval

import (
	"context"
	"sync"
)

// scoring runs the scoring and storing of answers beside the engines when a
// judge grades them. A verdict takes as long as any model call; scored in an
// engine's commit loop, which hears one outcome at a time, it would hold up
// every answer behind it and the workers waiting to hand theirs in. Without
// a judge, scoring is a few string checks and runs in place (a nil
// *scoring).
type scoring struct {
	slots  chan struct{}
	wg     sync.WaitGroup
	cancel context.CancelFunc // stops the run when storing fails

	mu  sync.Mutex
	err error
}

func newScoring(concurrency int, cancel context.CancelFunc) *scoring {
	return &scoring{slots: make(chan struct{}, max(1, concurrency)), cancel: cancel}
}

// do runs f beside the caller once a slot is free (so that answers queue
// here, not in memory without bound), or in place when s is nil. It returns
// the first error an earlier f returned, so that the caller stops too.
func (s *scoring) do(f func() error) error {
	if s == nil {
		return f()
	}
	if err := s.failed(); err != nil {
		return err
	}
	s.slots <- struct{}{}
	s.wg.Go(func() {
		defer func() { <-s.slots }()
		if err := f(); err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
			s.cancel()
		}
	})
	return nil
}

func (s *scoring) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// wait returns once everything handed to do has finished, with the first
// error.
func (s *scoring) wait() error {
	if s == nil {
		return nil
	}
	s.wg.Wait()
	return s.failed()
}
