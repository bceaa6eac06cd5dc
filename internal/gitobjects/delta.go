package gitobjects

import (
	"errors"
)

var errBadDelta = errors.New("malformed delta")

// deltaSizes reads the two sizes a delta starts with: its base's and its
// result's.
func deltaSizes(delta []byte) (base, result int64, rest []byte, err error) {
	base, delta, err = deltaVarint(delta)
	if err != nil {
		return 0, 0, nil, err
	}
	result, delta, err = deltaVarint(delta)
	return base, result, delta, err
}

func deltaVarint(b []byte) (int64, []byte, error) {
	var v int64
	for i, shift := 0, 0; i < len(b) && shift <= 56; i, shift = i+1, shift+7 {
		v |= int64(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return v, b[i+1:], nil
		}
	}
	return 0, nil, errBadDelta
}

// applyDeltaInto builds the object a delta describes from its base: a
// series of copies from the base and inserts of literal bytes. Every bound
// is checked, since a damaged pack must give an error, not a panic. The
// result is written into into when it is given, of exactly the result's
// size (a slot of the cache), or else into a new slice.
func applyDeltaInto(into, base, delta []byte) ([]byte, error) {
	baseSize, resultSize, ops, err := deltaSizes(delta)
	if err != nil {
		return nil, err
	}
	if baseSize != int64(len(base)) || resultSize > maxObjectBytes || (into != nil && int64(len(into)) != resultSize) {
		return nil, errBadDelta
	}
	out := into[:0:len(into)]
	if into == nil {
		out = make([]byte, 0, resultSize)
	}
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		if op&0x80 == 0 {
			n := int(op)
			if n == 0 || n > len(ops) || int64(len(out)+n) > resultSize {
				return nil, errBadDelta
			}
			out = append(out, ops[:n]...)
			ops = ops[n:]
			continue
		}
		// A copy: bits 0-3 say which bytes of the offset follow, bits 4-6
		// which bytes of the size; a size of zero means 0x10000.
		var off, n int64
		for i := range 7 {
			if op&(1<<i) == 0 {
				continue
			}
			if len(ops) == 0 {
				return nil, errBadDelta
			}
			if i < 4 {
				off |= int64(ops[0]) << (8 * i)
			} else {
				n |= int64(ops[0]) << (8 * (i - 4))
			}
			ops = ops[1:]
		}
		if n == 0 {
			n = 0x10000
		}
		if off+n > int64(len(base)) || int64(len(out))+n > resultSize {
			return nil, errBadDelta
		}
		out = append(out, base[off:off+n]...)
	}
	if int64(len(out)) != resultSize {
		return nil, errBadDelta
	}
	return out, nil
}
