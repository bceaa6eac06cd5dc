package userdiff

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// git compiles diff.NAME.xfuncname with regcomp(REG_EXTENDED), and
// diff.NAME.funcname as a basic expression: POSIX syntax as the C library
// (glibc, with its GNU extensions) reads it. translate rewrites such an
// expression in Go's syntax with the same meaning and the same numbering
// of groups, or says what Go cannot match. The differences that matter:
// a backslash inside brackets is a plain character in POSIX; an unmatched
// ')' is one too; in a basic expression \( \) \{ \} \| \+ \? are the
// operators and ( ) { } | + ? plain; GNU's \w \s \` \' have Go spellings,
// while \< \> and back-references have none.

// translate rewrites expr, extended (ERE) or basic (BRE), in Go's syntax.
func translate(expr string, extended bool) (string, error) {
	t := translator{src: expr, extended: extended}
	if err := t.run(); err != nil {
		return "", err
	}
	return t.out.String(), nil
}

type translator struct {
	src      string
	extended bool
	i        int
	out      strings.Builder
	depth    int // groups open
	// atStart: nothing yet to repeat (the start, or just after '(' or '|').
	atStart bool
	// lastRepeat is the output offset of a repetition just written, for a
	// second one right after it (POSIX allows a** and a*?; Go does not).
	lastRepeat int
}

func (t *translator) run() error {
	t.atStart, t.lastRepeat = true, -1
	for t.i < len(t.src) {
		c := t.src[t.i]
		t.i++
		var err error
		if t.extended {
			err = t.extendedToken(c)
		} else {
			err = t.basicToken(c)
		}
		if err != nil {
			return err
		}
	}
	if t.depth > 0 {
		return errors.New("a '(' is never closed. Try: balance the parentheses")
	}
	return nil
}

func (t *translator) extendedToken(c byte) error {
	switch c {
	case '\\':
		return t.escape()
	case '[':
		return t.bracket()
	case '(':
		t.open()
	case ')':
		if t.depth == 0 {
			t.literal(")") // glibc reads an unmatched ')' as itself
			return nil
		}
		t.close()
	case '|':
		t.alternate()
	case '*', '+', '?':
		return t.repeat(string(c))
	case '{':
		return t.interval(false)
	case '^', '$':
		t.anchor(c)
	case '.':
		t.atom(".")
	default:
		t.i-- // read the whole character, which may be several bytes
		t.char()
	}
	return nil
}

func (t *translator) basicToken(c byte) error {
	switch c {
	case '\\':
		if t.i == len(t.src) {
			return errors.New("it ends in a lone backslash. Try: \\\\ for a backslash")
		}
		switch t.src[t.i] {
		case '(':
			t.i++
			t.open()
			return nil
		case ')':
			t.i++
			if t.depth == 0 {
				return errors.New(`a \) closes no group. Try: balance \( and \)`)
			}
			t.close()
			return nil
		case '|':
			t.i++
			t.alternate()
			return nil
		case '{':
			t.i++
			return t.interval(true)
		case '+', '?':
			t.i++
			return t.repeat(t.src[t.i-1 : t.i])
		}
		return t.escape()
	case '[':
		return t.bracket()
	case '*':
		if t.atStart {
			t.literal("*") // a leading '*' is a plain star in a basic expression
			return nil
		}
		return t.repeat("*")
	case '^':
		if t.atStart {
			t.anchor('^')
		} else {
			t.literal("^")
		}
	case '$':
		// An anchor only at the end of the expression or of a group or branch.
		if rest := t.src[t.i:]; rest == "" || strings.HasPrefix(rest, `\)`) || strings.HasPrefix(rest, `\|`) {
			t.anchor('$')
		} else {
			t.literal("$")
		}
	case '.':
		t.atom(".")
	default:
		t.i--
		t.char()
	}
	return nil
}

// escape reads what follows a backslash (the backslash is read).
func (t *translator) escape() error {
	if t.i == len(t.src) {
		return errors.New("it ends in a lone backslash. Try: \\\\ for a backslash")
	}
	c := t.src[t.i]
	switch c {
	case 'w':
		t.i++
		t.atom(`[[:alnum:]_]`)
	case 'W':
		t.i++
		t.atom(`[^[:alnum:]_]`)
	case 's':
		t.i++
		t.atom(`[[:space:]]`)
	case 'S':
		t.i++
		t.atom(`[^[:space:]]`)
	case 'b', 'B':
		t.i++
		t.zeroWidth(`\` + string(c))
	case '`':
		t.i++
		t.zeroWidth(`\A`)
	case '\'':
		t.i++
		t.zeroWidth(`\z`)
	case '<', '>':
		return fmt.Errorf(`\%c (GNU's %s of a word) has no equivalent digest can match. Try: \b, a word boundary at either end`, c, map[byte]string{'<': "start", '>': "end"}[c])
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return fmt.Errorf(`\%c refers back to a group, which digest cannot match. Try: an expression without back-references`, c)
	default:
		// Any other escaped character stands for itself.
		t.char()
	}
	return nil
}

func (t *translator) open() {
	t.out.WriteByte('(')
	t.depth++
	t.atStart, t.lastRepeat = true, -1
}

func (t *translator) close() {
	t.out.WriteByte(')')
	t.depth--
	t.atStart, t.lastRepeat = false, -1
}

func (t *translator) alternate() {
	t.out.WriteByte('|')
	t.atStart, t.lastRepeat = true, -1
}

func (t *translator) anchor(c byte) {
	t.out.WriteByte(c)
	t.lastRepeat = -1
	// After '^', a basic expression's '*' is a plain star; an extended one's
	// is an error in glibc, and in Go.
	t.atStart = c == '^' && !t.extended
}

func (t *translator) zeroWidth(s string) {
	t.out.WriteString(s)
	t.atStart, t.lastRepeat = false, -1
}

func (t *translator) atom(s string) {
	t.out.WriteString(s)
	t.atStart, t.lastRepeat = false, -1
}

func (t *translator) literal(s string) { t.atom(regexp.QuoteMeta(s)) }

// char copies the character at t.i (a whole UTF-8 sequence) as a literal.
func (t *translator) char() {
	_, size := utf8.DecodeRuneInString(t.src[t.i:])
	t.literal(t.src[t.i : t.i+size])
	t.i += size
}

// repeat writes *, + or ?; two in a row are what the pair means in POSIX.
func (t *translator) repeat(op string) error {
	if t.atStart {
		return fmt.Errorf("%q has nothing before it to repeat. Try: \\%s for the character itself", op, op)
	}
	if t.lastRepeat >= 0 {
		prev := t.out.String()[t.lastRepeat:]
		if prev != "*" && prev != "+" && prev != "?" {
			return fmt.Errorf("%q repeats a repetition. Try: a group around the inner one", op)
		}
		merged := "*"
		if prev == op && op != "*" {
			merged = op // a++ is a+, a?? is a?
		}
		s := t.out.String()[:t.lastRepeat] + merged
		t.out.Reset()
		t.out.WriteString(s)
		return nil
	}
	t.lastRepeat = t.out.Len()
	t.out.WriteString(op)
	return nil
}

// interval reads {m}, {m,}, {m,n} or {,n} after the '{' (or "\{"); in a
// basic expression it closes with "\}". In an extended one a '{' that
// starts no interval stays a character, as Go reads it.
func (t *translator) interval(basic bool) error {
	rest := t.src[t.i:]
	end := "}"
	if basic {
		end = `\}`
	}
	stop := strings.Index(rest, end)
	body := ""
	if stop >= 0 {
		body = rest[:stop]
	}
	lo, hi, comma := strings.Cut(body, ",")
	valid := stop >= 0 && digits(lo) && digits(hi) && (lo != "" || comma && hi != "")
	if !valid {
		if basic {
			return errors.New(`a \{ starts no interval. Try: \{m,n\} after what it repeats`)
		}
		t.literal("{")
		return nil
	}
	if t.atStart {
		return errors.New("an interval has nothing before it to repeat. Try: \\{ for the character itself")
	}
	if lo == "" {
		lo = "0" // glibc's {,n}; Go reads "{,n}" as characters
	}
	t.i += stop + len(end)
	if comma {
		t.out.WriteString("{" + lo + "," + hi + "}")
	} else {
		t.out.WriteString("{" + lo + "}")
	}
	t.lastRepeat = -1
	return nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// bracket translates a bracket expression (the '[' is read): a ']' first
// is a member, a backslash is a member, [:class:] passes, and [=c=] and
// [.c.] of one character are that character.
func (t *translator) bracket() error {
	var b strings.Builder
	b.WriteByte('[')
	if t.i < len(t.src) && t.src[t.i] == '^' {
		b.WriteByte('^')
		t.i++
	}
	for first := true; ; first = false {
		if t.i >= len(t.src) {
			return errors.New("a '[' is never closed. Try: \\[ for the character itself")
		}
		c := t.src[t.i]
		if c == ']' && !first {
			t.i++
			break
		}
		if c == '[' && t.i+1 < len(t.src) && strings.IndexByte(":=.", t.src[t.i+1]) >= 0 {
			kind := t.src[t.i+1]
			end := strings.Index(t.src[t.i+2:], string(kind)+"]")
			if end < 0 {
				return fmt.Errorf("a '[%c' in brackets is never closed. Try: [%cname%c]", kind, kind, kind)
			}
			name := t.src[t.i+2 : t.i+2+end]
			t.i += 2 + end + 2
			if kind == ':' {
				if !posixClasses[name] {
					return fmt.Errorf("[:%s:] is not a character class. Try: one of [:alpha:] [:digit:] [:space:] [:alnum:] [:upper:] [:lower:] [:punct:]", name)
				}
				b.WriteString("[:" + name + ":]")
				continue
			}
			if utf8.RuneCountInString(name) != 1 {
				return fmt.Errorf("[%c%s%c] names no single character, which is all digest can match. Try: the character itself", kind, name, kind)
			}
			b.WriteString(regexp.QuoteMeta(name))
			continue
		}
		_, size := utf8.DecodeRuneInString(t.src[t.i:])
		member := t.src[t.i : t.i+size]
		t.i += size
		if member == "-" || member == "\\" || member == "[" || member == "]" || member == "^" {
			b.WriteByte('\\')
		}
		b.WriteString(member)
		// A range's ends are written as members are; its '-' as a range.
		if t.i+1 < len(t.src) && t.src[t.i] == '-' && t.src[t.i+1] != ']' {
			t.i++
			_, size := utf8.DecodeRuneInString(t.src[t.i:])
			hi := t.src[t.i : t.i+size]
			t.i += size
			b.WriteByte('-')
			if hi == "\\" || hi == "[" || hi == "]" || hi == "^" || hi == "-" {
				b.WriteByte('\\')
			}
			b.WriteString(hi)
		}
	}
	b.WriteByte(']')
	t.atom(b.String())
	return nil
}

var posixClasses = map[string]bool{
	"alnum": true, "alpha": true, "blank": true, "cntrl": true, "digit": true, "graph": true,
	"lower": true, "print": true, "punct": true, "space": true, "upper": true, "xdigit": true,
}
