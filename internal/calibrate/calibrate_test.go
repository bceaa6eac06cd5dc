package calibrate

import (
	"math"
	"sync"
	"testing"
)

func TestFallbackUntilEnoughSamples(t *testing.T) {
	l := New(0, 0, 1.42)
	if f := l.Factor(); f != 1.42 {
		t.Fatalf("factor %v before any answer, want the fallback", f)
	}
	for range MinSamples - 1 {
		l.Observe(1000, 1300)
	}
	if f := l.Factor(); f != 1.42 {
		t.Errorf("factor %v after %d answers, want the fallback still", f, MinSamples-1)
	}
	l.Observe(1000, 1300)
	if f := l.Factor(); math.Abs(f-1.3) > 1e-9 {
		t.Errorf("factor %v, want 1.3 learned", f)
	}
	if got := l.Scale(100); got != 130 {
		t.Errorf("Scale(100) = %d", got)
	}
}

func TestPriorIsWeighedWithTheRun(t *testing.T) {
	l := New(1.5, 30, 1)
	if f := l.Factor(); f != 1.5 {
		t.Errorf("factor %v from the prior alone", f)
	}
	for range 10 {
		l.Observe(1000, 1100)
	}
	if f := l.Factor(); math.Abs(f-(1.5*30+1.1*10)/40) > 1e-9 {
		t.Errorf("factor %v", f)
	}
	if f, n := l.Learned(); math.Abs(f-1.1) > 1e-9 || n != 10 {
		t.Errorf("learned %v over %d, want this run's 1.1 over 10", f, n)
	}
}

func TestOddCountsAreBounded(t *testing.T) {
	l := New(0, 0, 1)
	for range MinSamples {
		l.Observe(100, 1_000_000) // a server's nonsense count
		l.Observe(10, 500)        // too small to learn from
		l.Observe(100, 0)         // no usage
	}
	if f := l.Factor(); f != 4 {
		t.Errorf("factor %v, want the bound 4", f)
	}
	if New(math.NaN(), 5, 0).Factor() != 1 {
		t.Error("a NaN prior was taken")
	}
}

func TestConcurrentObservations(t *testing.T) {
	l := New(0, 0, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				l.Observe(1000, 1400)
				_ = l.Scale(10)
			}
		})
	}
	wg.Wait()
	if f, n := l.Learned(); n != 800 || math.Abs(f-1.4) > 1e-9 {
		t.Errorf("learned %v over %d", f, n)
	}
}

func TestLearningStopsAfterRunSamples(t *testing.T) {
	l := New(0, 0, 1)
	for range RunSamples - 1 {
		l.Observe(1000, 1200)
	}
	if !l.Learning() {
		t.Fatal("stopped learning early")
	}
	l.Observe(1000, 1200)
	if l.Learning() {
		t.Error("still learning after RunSamples answers")
	}
}
