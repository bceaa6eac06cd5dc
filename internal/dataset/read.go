package dataset

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
)

// DefaultMaxLineBytes is the longest line Read accepts unless told
// otherwise. 16 MiB is about four million tokens, past every model's
// context window: a longer line could only be refused by the provider after
// being uploaded, while tokenizing, storing and sending it would take
// seconds and hundreds of megabytes. The reader itself copes with longer
// limits (it is tested with a 100 MB line).
const DefaultMaxLineBytes = 16 << 20

// longLineHint ends the error of a line over the limit.
const longLineHint = "Try: a shorter item, or --skip-invalid to leave it out"

// Options configure Read.
type Options struct {
	// Name is the file name errors show; "-" shows as "stdin".
	Name string
	// Template is the promptfoo prompt template (from --prompt FILE), with
	// {{var}} placeholders; promptfoo test cases need it.
	Template string
	// SkipInvalid collects bad lines and reads on instead of stopping.
	SkipInvalid bool
	// MaxLineBytes bounds a line's length; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
}

func (o Options) name() string {
	switch o.Name {
	case "-":
		return "stdin"
	case "":
		return "dataset"
	}
	return o.Name
}

// Read streams a JSON Lines dataset: it reads one line at a time and calls
// fn with each item, in order, before reading the next line, so memory does
// not grow with the dataset. It stops at fn's first error and returns it
// unwrapped.
//
// Blank (whitespace-only) lines are ignored; a UTF-8 byte order mark on line
// 1 and CRLF line ends are accepted. A line that cannot be read (invalid
// UTF-8 or JSON, not an object, a field of the wrong type, a line longer than
// o.MaxLineBytes) is a *LineError naming the file, the line and what is
// wrong; with o.SkipInvalid it is appended to skipped and reading goes on.
// A template that cannot be parsed and a failing reader are plain errors.
//
// A line's format is detected from its keys (present, even as null), the
// first match winning:
//
//  1. "prompt" or "messages": native
//  2. "input" and "ideal": openai/evals
//  3. "input" and "target", or "input" and "choices": inspect
//  4. "vars": promptfoo, which needs o.Template
//
// A line matching none is a LineError listing the accepted shapes. Other
// keys are ignored. What the fields become:
//
//   - native {"id"?, "system"?, "prompt" | "messages", "expected"?,
//     "assert"?, "metadata"?}: "prompt" is one user message; "messages" a
//     conversation whose leading system messages join "system" (a blank
//     line apart) in Item.System. "expected" goes to Expected.
//
//   - openai/evals {"input", "ideal"}: a string "input" is one user message;
//     in a list, system messages anywhere go to System, and system messages
//     named "example_user" or "example_assistant" (evals' few-shot
//     convention) are user and assistant turns. "ideal" goes to Expected.
//
//   - inspect {"input", "target"?, "choices"?}: "input" as in openai/evals,
//     except that system messages must lead. "target" goes to Expected.
//     With "choices" (1 to 26 strings, kept in Choices), the last user
//     message is sent as
//
//     <question>\n\nA) <choice>\nB) <choice>...\n\n + ChoiceInstruction
//
//     and each target, a letter ("B", or "b") or a choice's text, is stored
//     in Expected as its letter: Expected of a multiple-choice item always
//     holds letters.
//
//   - promptfoo {"vars", "assert"?, "description"?}: the template's
//     {{name}} placeholders ({{ name }} too, and {{a.b}} paths into object
//     vars) are filled with the vars, strings as they are, null as nothing, anything
//     else as compact JSON; a placeholder with no var is a LineError. A
//     template that is a JSON list of {"role", "content"} is a chat prompt,
//     its system messages going to System. The {{ }} placeholders of string
//     assertion values are filled too, as promptfoo does. Nunjucks filters
//     and tags are not supported (a template error), nor vars given as lists
//     to multiply test cases (a list is filled in as JSON).
//
// In every format: "id", a string or a number (kept as written), is the ID,
// else a promptfoo "description", else "line-N"; "metadata" must be an
// object; "assert" is a list of {"type", "value"?, "weight"?, "threshold"?}
// whose types are translated by AssertionType and checked (weight >= 0,
// threshold a number, a regex value compiling, a numeric value a number).
// A message is {"role": "system" | "user" | "assistant" ("developer" is
// system), "content"}, content being a string or a list of {"type": "text",
// "text"} parts (joined by newlines); no message may be empty and the
// conversation must end with a user message. Answers (expected, ideal,
// target) are strings, or lists of strings any of which is right; numbers
// are taken as written ("expected": 72 is "72") and empty answers dropped.
// No default assertions are added: scoring picks them by Item.Format.
func Read(r io.Reader, o Options, fn func(Item) error) (skipped []*LineError, err error) {
	var tmpl *template
	if o.Template != "" {
		if tmpl, err = parseTemplate(o.Template); err != nil {
			return nil, err
		}
	}
	limit := o.MaxLineBytes
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	name := o.name()
	lr := lineReader{br: bufio.NewReaderSize(r, 64<<10), max: limit}
	p := parser{tmpl: tmpl}
	for n := 1; ; n++ {
		line, size, rerr := lr.next()
		if rerr != nil && rerr != io.EOF {
			return skipped, fmt.Errorf("reading %s: %w", name, rerr)
		}
		if line == nil && size == 0 && rerr == io.EOF {
			return skipped, nil
		}
		var it Item
		var msg string
		switch {
		case size > limit:
			msg = fmt.Sprintf("line is %d bytes, longer than the %d-byte limit. %s", size, limit, longLineHint)
		default:
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\uFEFF"))
			}
			if len(bytes.TrimSpace(line)) == 0 {
				if rerr == io.EOF {
					return skipped, nil
				}
				continue
			}
			var perr error
			it, perr = p.parse(line, n)
			lr.release()
			if perr != nil {
				msg = perr.Error()
			}
		}
		if msg != "" {
			le := &LineError{File: name, Line: n, Msg: msg}
			if !o.SkipInvalid {
				return skipped, le
			}
			skipped = append(skipped, le)
		} else if err := fn(it); err != nil {
			return skipped, err
		}
		if rerr == io.EOF {
			return skipped, nil
		}
	}
}

// hugeLine is the length from which a line's chunks are collected at once.
const hugeLine = 32 << 20

// lineReader reads lines of any length up to max. A line that fits bufio's
// buffer is used in place; a longer one is gathered in chunks and joined
// once, so that two copies of it are held only while joining; a line over
// max is counted and discarded as it is read.
type lineReader struct {
	br  *bufio.Reader
	max int
	big []byte // the last joined long line, until release
}

// next returns the next line without its "\n" or "\r\n", and the line's
// length; a line longer than max comes back nil with its length. err is
// io.EOF with the last line, or on its own at the end.
func (l *lineReader) next() (line []byte, size int, err error) {
	l.release()
	b, err := l.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		line = trimEOL(b)
		return line, len(line), err
	}
	// A long line: gather it in chunks that double up to 16 MiB, so that
	// little room is wasted and no chunk is copied as the line grows.
	var chunks [][]byte
	var cur []byte
	read := 0 // bytes of the line so far, its end included
	var tail [2]byte
	for {
		read += len(b)
		switch len(b) {
		case 0:
		case 1:
			tail = [2]byte{tail[1], b[0]}
		default:
			tail = [2]byte{b[len(b)-2], b[len(b)-1]}
		}
		if read <= l.max+2 { // room for "\r\n"
			for len(b) > 0 {
				if len(cur) == cap(cur) {
					c := 64 << 10
					if cur != nil {
						chunks = append(chunks, cur)
						c = min(2*cap(cur), 16<<20)
					}
					cur = make([]byte, 0, c)
				}
				k := copy(cur[len(cur):cap(cur)], b)
				cur, b = cur[:len(cur)+k], b[k:]
			}
		} else {
			chunks, cur = nil, nil
		}
		if err != bufio.ErrBufferFull {
			break
		}
		b, err = l.br.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return nil, 0, err
	}
	size = read
	switch {
	case tail[1] == '\n' && tail[0] == '\r':
		size -= 2
	case tail[1] == '\n' || tail[1] == '\r':
		size--
	}
	if size > l.max {
		return nil, size, err
	}
	chunks = append(chunks, cur)
	l.big = make([]byte, 0, read)
	for i, c := range chunks {
		l.big = append(l.big, c...)
		chunks[i] = nil // let the chunks go as soon as they are copied
	}
	if read >= hugeLine {
		// Reclaim the chunks now, before the line's strings are copied
		// out of it: otherwise the heap holds the chunks, the line and the
		// prompt at once, three times the line instead of two.
		runtime.GC()
	}
	return l.big[:size], size, err
}

// release drops a joined long line, so that a 100 MB line is not kept
// while its item is used or the next line is read.
func (l *lineReader) release() { l.big = nil }

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
