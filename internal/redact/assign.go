package redact

import "strings"

// maxElementLen bounds the search for an XML element's closing tag, so that
// a long line is not searched again for each of its opening tags.
const maxElementLen = 4096

// maxValueLen bounds a value: a string left open on its line is taken as
// the value up to here, so that a line of many keys is not read to its end
// for each.
const maxValueLen = 4096

// operator is how a key is given its value.
type operator uint8

const (
	opNone    operator = iota
	opEquals           // KEY=value, key = value, key ?= value
	opColon            // key: value, "key": "value"
	opDefine           // key := value: Go, where only a literal is a value
	opArrow            // 'key' => value: PHP and Ruby, likewise
	opArg              // ("key", "value"): a call setting key to value
	opSpace            // --password value, ENV KEY value, requirepass value
	opProse            // the password is value, the token was value
	opElement          // <password>value</password>
)

// assignment is a key found in a line, and what follows it.
type assignment struct {
	line     string
	lower    string // line with its ASCII letters lowered
	cat      category
	strict   bool // the value must look like a credential too
	op       operator
	spaced   bool // "key = value" rather than "key=value"
	indented bool // the key is not the first thing on its line
	// literal is set where the value cannot be another variable: the value
	// of a named entry, {name: DB_PASSWORD, value: ...}.
	literal bool
	name    string
}

// scanAssignments appends to spans the values of keys whose names say they
// hold secrets, in every way lines of code, configuration, shell and prose
// give a key its value.
func scanAssignments(line, lower string, marks markers, spans []span, state *lineState) []span {
	if cat := state.pendingName; cat != notSecret {
		state.pendingName = notSecret
		spans = pendingValue(line, lower, cat, spans)
	}
	if !containsKeyWord(lower) {
		return spans
	}
	for i := 0; i < len(line); {
		if !isNameChar(line[i]) {
			i++
			continue
		}
		start := i
		for i < len(line) && isNameChar(line[i]) {
			i++
		}
		if !containsKeyWord(lower[start:i]) || marks.contain(start) {
			continue
		}
		n := len(spans)
		spans = scanKey(line, lower, start, i, spans, state)
		if len(spans) > n {
			i = max(i, spans[len(spans)-1].end) // a value holds no more keys
		}
	}
	return spans
}

func containsKeyWord(lower string) bool {
	for _, w := range keyWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// isNameChar is a character of a key's name: DB_PASSWORD, spring.mail.password,
// X-Api-Key, --password.
func isNameChar(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '.'
}

// scanKey looks at the name line[start:end] and, if it names a secret,
// for the value given to it.
func scanKey(line, lower string, start, end int, spans []span, state *lineState) []span {
	name := strings.Trim(line[start:end], ".-")
	a := assignment{line: line, lower: lower, name: name}
	a.cat, a.strict = classifyKey(name)
	phraseStart := start
	if a.cat == notSecret {
		// "API key: ...", "access key = ...": the qualifier is a word apart.
		w := asciiLower(name)
		if w == "key" || w == "token" || w == "secret" {
			if q := wordBefore(line, start); q != "" {
				a.cat, a.strict = classifyKey(q + "_" + w)
				phraseStart = strings.LastIndex(line[:start], q)
			}
		}
		if a.cat == notSecret {
			return spans
		}
	}
	body := diffBody(line)
	a.indented = strings.TrimLeft(diffBody(line[:phraseStart]), " \t") != "" ||
		strings.HasPrefix(body, " ") || strings.HasPrefix(body, "\t")
	before := line[:start]
	after := end
	quote := byte(0)
	if start > 0 && isQuote(line[start-1]) && end < len(line) && line[end] == line[start-1] {
		quote = line[start-1]
		before = line[:start-1]
		after = end + 1
	}
	if named(before) {
		return namedValue(a, after, spans, state)
	}
	if start > 0 && line[start-1] == '<' && quote == 0 && after < len(line) && line[after] == '>' &&
		strings.Contains(line[after:min(len(line), after+maxElementLen)], "</"+line[start:end]) {
		a.op, a.literal = opElement, true
		return a.value(after+1, spans)
	}
	if after < len(line) && line[after] == ']' {
		after++ // env["DB_PASSWORD"] = ...
	}
	if rest := line[after:]; strings.HasPrefix(strings.TrimLeft(rest, " "), "{ get;") {
		// C#'s public string Password { get; set; } = "...";
		if close := strings.IndexByte(rest, '}'); close >= 0 {
			after += close + 1
		}
	}
	if after < len(line) && line[after] == '(' {
		return a.call(after+1, spans)
	}
	pos := a.operator(after, quote != 0, start)
	switch {
	case a.op == opNone:
		return spans
	case a.op == opColon && start > 0 && line[start-1] == ':':
		return spans // a part of a name such as arn:aws:...:secret:db
	case a.cat == authorizationKey:
		if a.op == opProse || a.op == opSpace {
			return spans
		}
		return authorizationValue(line, pos, spans)
	}
	if a.cat == credentialKey && pos < len(line) {
		if v := strings.TrimLeft(line[pos:], " "); v != "" && (v[0] == '(' || v[0] == '[') {
			return a.pair(len(line)-len(v)+1, spans)
		}
	}
	return a.value(pos, spans)
}

// call reads the value of a setter given a literal, line[pos:] following
// its opening parenthesis: setPassword("..."), WithToken("..."),
// SetBasicAuth("user", "...").
func (a *assignment) call(pos int, spans []span) []span {
	if a.cat == credentialKey {
		return a.pair(pos, spans)
	}
	words := splitWords(a.name[strings.LastIndexByte(a.name, '.')+1:])
	switch {
	case len(words) == 0:
		return spans
	case hasAny(words[0], []string{"set", "with", "use", "put"}):
	case len(words) == 1, len(words) == 2 && hasAny(words[0], keyQualifiers):
		// a builder's .password("..."), .apiKey("...")
	default:
		return spans // getPassword("user"), checkToken(t): not given a value
	}
	for pos < len(a.line) && a.line[pos] == ' ' {
		pos++
	}
	if pos >= len(a.line) || !isQuote(a.line[pos]) {
		return spans
	}
	a.op = opArg
	return a.value(pos, spans)
}

// pair reads the password of a user and password given together, the
// second of two literals at line[pos:]: ("admin", "..."), ["ci", "..."].
func (a *assignment) pair(pos int, spans []span) []span {
	line := a.line
	for pos < len(line) && line[pos] == ' ' {
		pos++
	}
	if pos >= len(line) || !isQuote(line[pos]) {
		return spans
	}
	end := closingQuote(line, pos+1, line[pos])
	rest := strings.TrimLeft(line[min(end+1, len(line)):], " ")
	if !strings.HasPrefix(rest, ",") {
		return spans
	}
	second := len(line) - len(strings.TrimLeft(rest[1:], " "))
	if second >= len(line) || !isQuote(line[second]) {
		return spans
	}
	a.op, a.cat, a.strict = opArg, passwordKey, false
	return a.value(second, spans)
}

// wordBefore is the word before line[at:], with the spaces between: "API"
// in "API key".
func wordBefore(line string, at int) string {
	i := at
	for i > 0 && line[i-1] == ' ' {
		i--
	}
	if i == at {
		return ""
	}
	j := i
	for j > 0 && isAlnum(line[j-1]) {
		j--
	}
	return line[j:i]
}

// diffBody is a line without its diff prefix.
func diffBody(line string) string {
	if line != "" && (line[0] == '+' || line[0] == '-') {
		return line[1:]
	}
	return line
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// named reports whether the text before a key gives it as the name of an
// entry whose value follows apart: name: DB_PASSWORD, key="ApiKey".
func named(before string) bool {
	b := strings.TrimRight(before, " \t")
	b = strings.TrimRight(b, "\"'")
	b = strings.TrimRight(b, " \t")
	if !strings.HasSuffix(b, ":") && !strings.HasSuffix(b, "=") {
		return false
	}
	b = strings.TrimRight(b[:len(b)-1], " \t\"'")
	lb := asciiLower(b[max(0, len(b)-5):])
	return strings.HasSuffix(lb, "name") || strings.HasSuffix(lb, "key") && !strings.HasSuffix(lb, "_key") && !strings.HasSuffix(lb, "-key")
}

// namedValue finds the value of an entry named by a secret key: on the same
// line (value="...", "value": "...") or, in a Kubernetes env list, as
// "value:" on the next line.
func namedValue(a assignment, after int, spans []span, state *lineState) []span {
	a.literal = true
	rest := a.line[after:]
	trimmed := strings.TrimLeft(rest, " \t,;\"'")
	if strings.TrimSpace(trimmed) == "" || trimmed == "}" {
		state.pendingName = a.cat
		return spans
	}
	skipped := len(rest) - len(trimmed)
	if !strings.HasPrefix(asciiLower(trimmed[:min(len(trimmed), 5)]), "value") {
		if strings.HasPrefix(trimmed, ">") { // <entry key="apiKey">value</entry>
			a.op = opElement
			return a.value(after+skipped+1, spans)
		}
		return spans
	}
	pos := after + skipped + len("value")
	for pos < len(a.line) && (a.line[pos] == '"' || a.line[pos] == '\'' || a.line[pos] == ' ') {
		pos++
	}
	if pos >= len(a.line) || (a.line[pos] != ':' && a.line[pos] != '=') {
		return spans
	}
	a.op = opColon
	return a.value(pos+1, spans)
}

// pendingValue is the "value:" line after a "name:" line naming a secret.
func pendingValue(line, lower string, cat category, spans []span) []span {
	body := diffBody(line)
	trimmed := strings.TrimLeft(body, " \t-")
	if !strings.HasPrefix(asciiLower(trimmed[:min(len(trimmed), 6)]), "value:") {
		return spans
	}
	pos := len(line) - len(trimmed) + len("value:")
	a := assignment{line: line, lower: lower, cat: cat, op: opColon, indented: true, literal: true, name: "value"}
	return a.value(pos, spans)
}

// operator reads how the key is given its value at line[pos:], sets a.op,
// and returns where the value starts.
func (a *assignment) operator(pos int, quotedKey bool, keyStart int) int {
	line := a.line
	i := pos
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	a.spaced = i > pos
	if i >= len(line) {
		return i
	}
	rest := line[i:]
	switch {
	case strings.HasPrefix(rest, ":="):
		a.op = opDefine
		return i + 2
	case strings.HasPrefix(rest, "=>"):
		a.op = opArrow
		return i + 2
	case strings.HasPrefix(rest, "=="), strings.HasPrefix(rest, "=~"):
		return i
	case rest[0] == '=':
		a.op = opEquals
		return i + 1
	case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "||="):
		a.op = opEquals
		return i + strings.IndexByte(rest, '=') + 1
	case strings.HasPrefix(rest, ":-"): // ${DB_PASSWORD:-default}, the default is a password too
		a.op, a.literal = opEquals, true
		return i + 2
	case rest[0] == ':' && !strings.HasPrefix(rest, "::") && !strings.HasPrefix(rest, ":/") && !strings.HasPrefix(rest, ":\\"):
		a.op = opColon
		return i + 1
	case rest[0] == ',' && quotedKey:
		j := i + 1
		for j < len(line) && line[j] == ' ' {
			j++
		}
		if j < len(line) && isQuote(line[j]) {
			a.op = opArg
			return j
		}
		return i
	}
	if !a.spaced {
		return i
	}
	// Only a few places give a value after a space alone.
	lowerBody := strings.TrimLeft(diffBody(a.lower[:keyStart]), " \t")
	switch {
	case strings.HasPrefix(line[keyStart:], "-") && !quotedKey: // --password value, -Password value
		a.op = opSpace
	case lowerBody == "env " || lowerBody == "setx " || lowerBody == "":
		if lowerBody != "" || a.name == "requirepass" || a.name == "masterauth" {
			a.op = opSpace
		}
	case (a.name == "password" || a.name == "passwd") && isNetrc(lowerBody):
		a.op = opSpace // .netrc
	}
	if a.op == opSpace {
		return i
	}
	if w, n := proseVerb(a.lower[i:]); w {
		a.op = opProse
		return i + n
	}
	return i
}

// isNetrc reports a .netrc entry before a password: machine host login user.
func isNetrc(lowerBefore string) bool {
	near := lowerBefore[max(0, len(lowerBefore)-maxNetrcEntry):]
	return strings.Contains(near, "login ") || strings.Contains(near, "machine ")
}

// maxNetrcEntry bounds how far before a password its .netrc entry starts.
const maxNetrcEntry = 256

// proseVerbs join a secret's name and its value in a sentence.
var proseVerbs = []string{"is now ", "is still ", "is ", "was ", "changed to ", "set to ", "reset to ", "rotated to ", "to ", "= "}

func proseVerb(rest string) (bool, int) {
	for _, v := range proseVerbs {
		if strings.HasPrefix(rest, v) {
			return true, len(v)
		}
	}
	return false, 0
}

// value reads the value at line[pos:] and appends it to spans if it is a
// secret.
func (a *assignment) value(pos int, spans []span) []span {
	line := a.line
	for pos < len(line) && (line[pos] == ' ' || line[pos] == '\t') {
		pos++
	}
	if pos >= len(line) {
		return spans
	}
	rest := line[pos:]
	// Go's []byte("..."), C#'s @"...", Python's b"..." and f"...".
	for _, wrap := range []string{"[]byte(", "[]rune("} {
		if strings.HasPrefix(rest, wrap) {
			pos += len(wrap)
			rest = rest[len(wrap):]
		}
	}
	if len(rest) > 1 && isQuote(rest[1]) {
		switch rest[0] {
		case 'f', 'F', '$':
			return spans // interpolated: made of other values
		case 'b', 'B', 'r', 'R', 'u', 'U', '@':
			pos++
			rest = rest[1:]
		}
	}
	var start, end int
	quoted := a.op != opElement && isQuote(rest[0])
	if quoted {
		start = pos + 1
		end = closingQuote(line, start, rest[0])
	} else {
		if a.op == opDefine || a.op == opArrow || a.op == opArg {
			return spans // only a literal is a value here; the rest is code
		}
		start = pos
		end = start
		limit := min(len(line), start+maxValueLen)
		for end < limit && !endsUnquoted(line[end], a.op) {
			end++
		}
		if a.op == opColon {
			if eq := typeAnnotationEnd(line, start); eq > 0 {
				a.op, a.spaced = opEquals, true
				return a.value(eq, spans)
			}
		}
		if a.isPassphrase() && (a.op == opColon || a.op == opEquals) {
			// A passphrase is words: it goes on to the line's end or comment.
			end = limit
			if c := strings.Index(line[start:limit], " #"); c >= 0 {
				end = start + c
			}
			for end > start && line[end-1] == ' ' {
				end--
			}
		}
		if a.op == opProse || a.op == opColon {
			for end > start && strings.IndexByte(".,:!?)", line[end-1]) >= 0 {
				end--
			}
		}
	}
	v := line[start:end]
	var next byte
	if e := end; e < len(line) {
		if quoted && e+1 < len(line) {
			e++
		}
		for e < len(line) && line[e] == ' ' {
			e++
		}
		if e < len(line) {
			next = line[e]
		}
	}
	if !a.isSecret(v, quoted, next) {
		return spans
	}
	return append(spans, span{start, end, a.cat.rule()})
}

func (a *assignment) isPassphrase() bool {
	return strings.HasSuffix(asciiLower(a.name), "passphrase")
}

// closingQuote is where the string opened before line[from] ends, or the
// end of the line for one that goes on.
func closingQuote(line string, from int, q byte) int {
	end := min(len(line), from+maxValueLen)
	for i := from; i < end; i++ {
		switch line[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return end
}

// endsUnquoted ends a value given without quotes.
func endsUnquoted(c byte, op operator) bool {
	if op == opElement {
		return c == '<'
	}
	switch c {
	case ' ', '\t', '\r', ';', '"', '\'', '`', '<', '&', ',', ')', '}', ']':
		return true
	}
	return false
}

// maxTypeLen bounds the type between a name and its value.
const maxTypeLen = 64

// typeAnnotationEnd reports, for what follows "name:" at line[from:],
// where the value starts if it is a type and then "=": apiKey: string =
// "...", TOKEN: &str = "...", password: Optional[str] = "...". It is 0 when
// no such type is there.
func typeAnnotationEnd(line string, from int) int {
	limit := min(len(line), from+maxTypeLen)
	for i := from; i < limit; i++ {
		switch c := line[i]; {
		case c == '=':
			// Spaced, as types are written: "a=b" is a value with an = in it.
			if i == from || line[i-1] != ' ' || i+1 < len(line) && (line[i+1] == '=' || line[i+1] == '>') {
				return 0
			}
			return i + 1
		case isAlnum(c) || strings.IndexByte(" _&*<>[].|?:", c) >= 0:
		default:
			return 0
		}
	}
	return 0
}
