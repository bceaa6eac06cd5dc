package offheap

import "testing"

func TestSliceIsZeroedWritableAndSized(t *testing.T) {
	type slot struct {
		key  uint64
		rank uint32
	}
	s, free := Slice[slot](100_000)
	defer free()
	if len(s) != 100_000 || cap(s) != 100_000 {
		t.Fatalf("len %d cap %d, want 100000", len(s), cap(s))
	}
	for i := range s {
		if s[i] != (slot{}) {
			t.Fatalf("slot %d is %+v, want zero", i, s[i])
		}
		s[i] = slot{uint64(i), uint32(i)}
	}
	for i := range s {
		if s[i].key != uint64(i) || s[i].rank != uint32(i) {
			t.Fatalf("slot %d reads %+v after writing %d", i, s[i], i)
		}
	}
}

func TestEmptySlice(t *testing.T) {
	s, free := Slice[byte](0)
	free()
	if len(s) != 0 {
		t.Fatalf("len %d, want 0", len(s))
	}
}
