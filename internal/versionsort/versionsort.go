// Package versionsort orders tag names as `git tag --sort=version:refname`
// does: git's versioncmp, glibc's strverscmp, which reads runs of digits
// as numbers (v1.10 after v1.9) and a run of leading zeros as a fraction
// (1.05 before 1.5). No versionsort.suffix is configured: a pre-release
// such as v1.0.0-rc1 sorts after v1.0.0, as git sorts it by default.
package versionsort

// States of the comparison, after versioncmp.c: S_N normal, S_I inside an
// integral part, S_F inside a fractional part, S_Z inside leading zeros.
// Each is a multiple of 3, to which the class of a byte is added.
const (
	stateN = 0
	stateI = 3
	stateF = 6
	stateZ = 9
)

// Results other than -1 and +1: cmp returns the difference of the bytes,
// byLength compares the lengths of the runs of digits first.
const (
	cmp      = 2
	byLength = 3
)

// nextState is versioncmp.c's next_state: rows are states, columns the
// class of the next byte (other, 1-9, 0).
var nextState = [12]int{
	/* S_N */ stateN, stateI, stateZ,
	/* S_I */ stateN, stateI, stateI,
	/* S_F */ stateN, stateF, stateF,
	/* S_Z */ stateN, stateF, stateZ,
}

// resultType is versioncmp.c's result_type: rows are a state and the class
// of the first byte that differs in a, columns the class of b's.
var resultType = [36]int{
	/*         x/x  x/d  x/0  d/x  d/d       d/0       0/x  0/d       0/0 */
	/* S_N */ cmp, cmp, cmp, cmp, byLength, cmp, cmp, cmp, cmp,
	/* S_I */ cmp, -1, -1, +1, byLength, byLength, +1, byLength, byLength,
	/* S_F */ cmp, cmp, cmp, cmp, cmp, cmp, cmp, cmp, cmp,
	/* S_Z */ cmp, +1, +1, -1, cmp, cmp, -1, cmp, cmp,
}

// class is 0 for a byte that is not a digit, 1 for 1-9, 2 for 0.
func class(c byte) int {
	switch {
	case c == '0':
		return 2
	case c >= '1' && c <= '9':
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// at is s[i], or 0 past its end, as a C string reads.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// Compare orders a and b as git's versioncmp does: negative when a sorts
// first, positive when b does, 0 only when they are equal. Like git it
// reads each as a C string, ending at its first NUL byte.
func Compare(a, b string) int {
	a, b = cString(a), cString(b)
	i := 0
	c1, c2 := at(a, 0), at(b, 0)
	state := stateN + class(c1)
	diff := int(c1) - int(c2)
	for diff == 0 {
		if c1 == 0 {
			return 0
		}
		state = nextState[state]
		i++
		c1, c2 = at(a, i), at(b, i)
		state += class(c1)
		diff = int(c1) - int(c2)
	}
	switch r := resultType[state*3+class(c2)]; r {
	case cmp:
		return sign(diff)
	case byLength:
		// The longer run of digits is the larger number.
		k := i + 1
		for ; isDigit(at(a, k)); k++ {
			if !isDigit(at(b, k)) {
				return 1
			}
		}
		if isDigit(at(b, k)) {
			return -1
		}
		return sign(diff)
	default:
		return r
	}
}

// cString is s up to its first NUL byte.
func cString(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return s[:i]
		}
	}
	return s
}

func sign(d int) int {
	switch {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}
