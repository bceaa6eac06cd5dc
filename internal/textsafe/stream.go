package textsafe

import (
	"io"
	"unicode/utf8"
)

// AppendJSON appends the JSON document src to dst with every character
// that Text would make visible written as a \u escape instead: DEL, C1
// controls, bidirectional and other invisible format characters. The
// document decodes to exactly the same values, and printed to a terminal
// as it is, it can neither drive the terminal nor reorder what is read.
// src is what encoding/json wrote: outside strings it has only ASCII, and
// it has already escaped the C0 controls.
func AppendJSON(dst, src []byte) []byte {
	var st state
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			st.inFlag = false
			if c == 0x7f {
				dst = appendJSONEscape(dst, 0x7f)
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			// Not from encoding/json, which writes only UTF-8; left alone,
			// as the document is not this function's to repair.
			st.inFlag = false
			dst = append(dst, c)
			i++
			continue
		}
		if st.shows(r) {
			dst = append(dst, src[i:i+size]...)
		} else {
			dst = appendJSONEscape(dst, r)
		}
		i += size
	}
	return dst
}

// appendJSONEscape writes r as \uXXXX, as a surrogate pair above U+FFFF.
func appendJSONEscape(b []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		b = appendJSONEscape(b, 0xd800+(r>>10))
		return appendJSONEscape(b, 0xdc00+(r&0x3ff))
	}
	b = append(b, '\\', 'u')
	for shift := 12; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[r>>shift&0xf])
	}
	return b
}

// Writer passes what is written through it on as Text shows it, for a
// stream that goes to a terminal whatever the program prints: a character
// cut by the end of one Write waits for the next (see Flush).
type Writer struct {
	w       io.Writer
	st      state
	partial []byte // the start of a character cut by the end of the last Write
	buf     []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Underlying is the writer the Writer writes to.
func (w *Writer) Underlying() io.Writer { return w.w }

// Write implements io.Writer. It reports all of p written once what p
// became is written, though that may be longer than p.
func (w *Writer) Write(p []byte) (int, error) {
	data := p
	if len(w.partial) > 0 {
		data = append(w.partial, p...)
	}
	keep := incompleteTail(data)
	whole := data[:len(data)-keep]
	var out []byte
	if len(w.partial) == 0 && keep == 0 && (!w.st.afterCR || len(p) == 0 || p[0] != '\n') && isCleanText(string(p)) {
		out = p
		if len(p) > 0 {
			w.st = state{}
		}
	} else {
		w.buf = w.st.appendText(w.buf[:0], string(whole))
		out = w.buf
	}
	w.partial = append(w.partial[:0:0], data[len(data)-keep:]...)
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes the start of a character that the last Write left cut, as
// the bytes it is (\xe2), for when nothing more will come to complete it.
// Without it those bytes, never a whole character, are dropped.
func (w *Writer) Flush() error {
	if len(w.partial) == 0 {
		return nil
	}
	w.buf = w.st.appendText(w.buf[:0], string(w.partial))
	w.partial = w.partial[:0]
	_, err := w.w.Write(w.buf)
	return err
}

// incompleteTail is how many bytes at the end of b begin a character that
// the bytes after them would complete.
func incompleteTail(b []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		if c := b[len(b)-k]; !utf8.RuneStart(c) {
			continue
		}
		if !utf8.FullRune(b[len(b)-k:]) {
			return k
		}
		return 0
	}
	return 0
}
