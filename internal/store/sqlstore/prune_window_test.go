package sqlstore

import "testing"

// TestLineWindowHoldsAChunk: a run's rows are deleted by windows of lines
// holding about pruneChunk rows each, whatever the lines and repeats.
func TestLineWindowHoldsAChunk(t *testing.T) {
	for _, c := range []struct{ low, high, rows, chunk, want int }{
		{1, 100000, 100000, 20000, 20000},         // one row per line
		{1, 10000, 300000, 20000, 666},            // 30 repeats or models per line
		{5, 5, 1000000, 20000, 1},                 // one line repeated a million times
		{1, 10, 5, 20000, 10},                     // fewer rows than a chunk
		{0, 2000000000, 2000000001, 20000, 20000}, // no overflow
	} {
		if got := lineWindow(c.low, c.high, c.rows, c.chunk); got != c.want {
			t.Errorf("lineWindow(%d, %d, %d rows, chunk %d) = %d, want %d", c.low, c.high, c.rows, c.chunk, got, c.want)
		}
	}
}
