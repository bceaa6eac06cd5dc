package gitobjects

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// put caches data under k the way readPacked does.
func put(c *baseCache, k baseKey, data []byte) bool {
	s, into := c.reserve(len(data))
	if s == nil {
		return false
	}
	copy(into, data)
	c.publish(s, k, 3)
	c.unpin(s)
	return true
}

func content(k baseKey, n int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%d;", k.off)), n)[:n]
}

// TestRingKeepsWhatItHoldsIntact: however bases of all sizes wrap around
// the ring, each one it still holds reads back as written, the newest are
// kept and only the oldest go.
func TestRingKeepsWhatItHoldsIntact(t *testing.T) {
	c := newBaseCache(4096)
	defer c.close()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := map[baseKey]int{}
	for i := range 2000 {
		k := baseKey{off: int64(i)}
		n := 1 + rng.IntN(512)
		if !put(c, k, content(k, n)) {
			t.Fatalf("base %d of %d bytes refused with nothing pinned", i, n)
		}
		sizes[k] = n
		held := 0
		for k := range c.byKey {
			s, data, ok := c.view(k)
			if !ok || !bytes.Equal(data, content(k, sizes[k])) {
				t.Fatalf("after %d bases, base %d reads %q", i+1, k.off, data)
			}
			c.unpin(s)
			held += len(data)
		}
		if held > 4096 {
			t.Fatalf("the ring holds %d bytes of bases in 4096", held)
		}
		if _, _, ok := c.view(k); !ok {
			t.Fatalf("the base just cached (%d) is not held", i)
		}
		c.unpin(c.byKey[k])
	}
	if len(c.byKey) < 8 {
		t.Errorf("only %d bases held at the end", len(c.byKey))
	}
}

// TestRingNeverOverwritesAPinnedBase: a base being read is never written
// over; bases that would need its bytes are not cached until it is let go.
func TestRingNeverOverwritesAPinnedBase(t *testing.T) {
	c := newBaseCache(4096)
	defer c.close()
	first := baseKey{off: 1}
	put(c, first, content(first, 500))
	s, data, _ := c.view(first)
	refused := 0
	for i := 2; i < 200; i++ {
		k := baseKey{off: int64(i)}
		if !put(c, k, content(k, 300)) {
			refused++
		}
		if !bytes.Equal(data, content(first, 500)) {
			t.Fatalf("the pinned base was written over after %d more", i)
		}
	}
	if refused == 0 {
		t.Fatal("no base was refused while the first, pinned, stood in the way")
	}
	c.unpin(s)
	for i := 200; i < 230; i++ {
		k := baseKey{off: int64(i)}
		if !put(c, k, content(k, 300)) {
			t.Fatalf("base %d refused with nothing pinned", i)
		}
	}
	if _, _, ok := c.view(first); ok {
		t.Error("the first base is still held once let go and passed by the ring")
	}
}

func TestRingRefusesWhatIsTooLarge(t *testing.T) {
	c := newBaseCache(4096)
	defer c.close()
	if s, _ := c.reserve(4096/8 + 1); s != nil {
		t.Error("a base over an eighth of the ring was taken")
	}
	if s, _ := c.reserve(0); s != nil {
		t.Error("an empty base was taken")
	}
	none := newBaseCache(0)
	defer none.close()
	if s, _ := none.reserve(1); s != nil {
		t.Error("a cache of 0 bytes took a base")
	}
}
