package dataset

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The helpers here walk JSON that json.Valid has already accepted, in place:
// a line's fields are sub-slices of the line, and only the strings an item
// keeps are copied out of it. That is what lets a 100 MB prompt be read in
// about twice its size (the line, then the prompt) instead of three or four
// times (encoding/json copies every json.RawMessage and unquotes through a
// scratch buffer). None of them may be given unvalidated input.

// field is one member of a JSON object: its unquoted key and its raw value.
// The key is a sub-slice of the line too, unless it had escapes.
type field struct {
	key []byte
	val []byte
}

// object is a JSON object's members, in order.
type object []field

// get returns the raw value of key, the last one if the key repeats (as
// encoding/json does), and whether it is there at all (null counts).
func (o object) get(key string) ([]byte, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if string(o[i].key) == key {
			return o[i].val, true
		}
	}
	return nil, false
}

// has reports whether key is present, even as null.
func (o object) has(key string) bool {
	_, ok := o.get(key)
	return ok
}

// opt returns the raw value of key unless it is absent or null.
func (o object) opt(key string) ([]byte, bool) {
	v, ok := o.get(key)
	if !ok || isNull(v) {
		return nil, false
	}
	return v, true
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// trimValue strips the whitespace around a single JSON value.
func trimValue(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && isJSONSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// stringEnd returns the index just past the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// members splits a valid JSON object into its members.
func members(b []byte) object {
	var o object
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] == '}' {
			return o
		}
		if b[i] == ',' {
			i++
			continue
		}
		end := stringEnd(b, i)
		key := b[i+1 : max(i+1, end-1)]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unquote(b[i:end]))
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ':' {
			i++
		}
		i = skipSpace(b, i)
		end = valueEnd(b, i)
		o = append(o, field{key, b[i:end]})
		i = end
	}
}

// elements splits a valid JSON array into its elements.
func elements(b []byte) [][]byte {
	var out [][]byte
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] == ']' {
			return out
		}
		if b[i] == ',' {
			i++
			continue
		}
		end := valueEnd(b, i)
		out = append(out, b[i:end])
		i = end
	}
}

func isNull(b []byte) bool   { return len(b) > 0 && b[0] == 'n' }
func isString(b []byte) bool { return len(b) > 0 && b[0] == '"' }
func isObject(b []byte) bool { return len(b) > 0 && b[0] == '{' }
func isArray(b []byte) bool  { return len(b) > 0 && b[0] == '[' }
func isNumber(b []byte) bool { return len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') }

// kind names a JSON value's type for error messages: "got a number".
func kind(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case isString(b):
		return "a string"
	case isObject(b):
		return "an object"
	case isArray(b):
		return "a list"
	case isNull(b):
		return "null"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// unquote decodes a valid JSON string literal (quotes included) with a
// single allocation, the size of the result. Like encoding/json, it turns a
// lone UTF-16 surrogate into U+FFFD.
func unquote(b []byte) string {
	if len(b) < 2 {
		return ""
	}
	b = b[1 : len(b)-1]
	esc := -1
	for i, c := range b {
		if c == '\\' {
			esc = i
			break
		}
	}
	if esc < 0 {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	sb.Write(b[:esc])
	for i := esc; i < len(b); {
		c := b[i]
		if c != '\\' {
			// Copy the run up to the next escape in one go.
			j := i + 1
			for j < len(b) && b[j] != '\\' {
				j++
			}
			sb.Write(b[i:j])
			i = j
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '"', '\\', '/':
			sb.WriteByte(b[i+1])
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				sb.WriteRune(utf8.RuneError)
				i += 2
				continue
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(b, i+2); ok && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						sb.WriteRune(dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			sb.WriteRune(r)
			continue
		default:
			sb.WriteByte(b[i+1])
		}
		i += 2
	}
	return sb.String()
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// quoteKey writes a key as it appears in messages: "prompt".
func quoteKey(k string) string { return strconv.Quote(k) }
