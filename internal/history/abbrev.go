package history

import (
	"math/bits"
	"sync"
)

// abbrevLen is git's default length of an abbreviated hash for a
// repository of count packed objects: half the bits of the count, rounded
// up, in hex digits, and 7 at least (git.git's 380,000 objects give 10).
func abbrevLen(count int) int {
	n := 0
	if count > 0 {
		n = bits.Len(uint(count)) // the highest bit set, plus one
	}
	return max(7, (n+1)/2)
}

type abbrevState struct {
	once sync.Once
	min  int
}

// Abbrev shortens a commit's hash as git does: to the repository's default
// length, longer where another object shares that prefix.
func (r *Repo) Abbrev(hash string) string {
	r.abbrev.once.Do(func() {
		count := 0
		if r.objects != nil {
			count = r.objects.PackedCount()
		}
		r.abbrev.min = abbrevLen(count)
	})
	n := min(r.abbrev.min, len(hash))
	if r.objects == nil {
		return hash[:n]
	}
	src := &source{r: r}
	for ; n < len(hash); n++ {
		found, err := src.Abbrev(hash[:n], 2)
		if err != nil || len(found) < 2 {
			break
		}
	}
	return hash[:n]
}
