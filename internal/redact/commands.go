package redact

import "strings"

const (
	urlPasswordRule   = "url-password"
	cliPasswordRule   = "cli-password"
	authorizationRule = "authorization-header"
)

// scanURLPasswords appends the passwords of URLs in line to spans:
// postgres://app:PASS@db/app, redis://:PASS@host, mongodb+srv://u:PASS@x,
// and of the Go MySQL driver's user:PASS@tcp(host)/db. The scheme, user and
// host stay.
func scanURLPasswords(line string, spans []span) []span {
	spans = scanMySQLDSNs(line, spans)
	for from := 0; ; {
		i := strings.Index(line[from:], "://")
		if i < 0 {
			return spans
		}
		auth := from + i + 3
		from = auth
		// The user information ends at the last @ before the host's end.
		end, at := auth, -1
		for end < len(line) && !strings.ContainsRune(" \t\r\"'`<>/?#\\", rune(line[end])) {
			if line[end] == '@' {
				at = end
			}
			end++
		}
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(line[auth:at], ':')
		if colon < 0 {
			continue
		}
		pass := auth + colon + 1
		if at-pass < minPasswordLen || placeholderValue(line[pass:at]) {
			continue
		}
		spans = append(spans, span{pass, at, urlPasswordRule})
		from = at
	}
}

// maxUserInfo bounds how far back a data source name's user and password
// are looked for before its @tcp(.
const maxUserInfo = 256

// scanMySQLDSNs appends the passwords of Go MySQL data source names.
func scanMySQLDSNs(line string, spans []span) []span {
	for _, proto := range []string{"@tcp(", "@unix("} {
		for from := 0; ; {
			i := strings.Index(line[from:], proto)
			if i < 0 {
				break
			}
			at := from + i
			from = at + len(proto)
			lo := max(0, at-maxUserInfo)
			start := lo + strings.LastIndexAny(line[lo:at], " \t\"'`") + 1
			colon := strings.IndexByte(line[start:at], ':')
			if colon < 0 {
				continue
			}
			if placeholderValue(line[start+colon+1 : at]) {
				continue
			}
			spans = append(spans, span{start + colon + 1, at, urlPasswordRule})
		}
	}
	return spans
}

// passwordCommands take a password right after -p: mysql -pPASS.
var passwordCommands = []string{"mysql", "mysqldump", "mysqladmin", "mariadb", "mariadb-dump", "mysqlimport", "mysqlsh"}

// scanCommandLines appends passwords given to commands as flags without a
// name that says so: mysql -pPASS, sshpass -p PASS, redis-cli -a PASS,
// docker login -p PASS, curl -u user:PASS.
func scanCommandLines(line, lower string, spans []span) []span {
	if strings.Contains(lower, "mysql") || strings.Contains(lower, "mariadb") {
		for _, cmd := range passwordCommands {
			if i := indexWord(lower, cmd); i >= 0 {
				spans = flagValue(line, i+len(cmd), " -p", false, spans)
				break
			}
		}
	}
	if i := indexWord(lower, "sshpass"); i >= 0 {
		spans = flagValue(line, i, " -p", true, spans)
	}
	if i := indexWord(lower, "redis-cli"); i >= 0 {
		spans = flagValue(line, i, " -a", true, spans)
	}
	for _, cmd := range []string{"docker login", "podman login", "helm registry login", "buildah login", "skopeo login"} {
		if i := strings.Index(lower, cmd); i >= 0 {
			spans = flagValue(line, i, " -p", true, spans)
		}
	}
	for _, cmd := range []string{"curl", "wget"} {
		if i := indexWord(lower, cmd); i >= 0 {
			spans = userPassword(line, i, spans)
		}
	}
	if i := indexWord(lower, "openssl"); i >= 0 {
		spans = flagValue(line, i, " -k", true, spans)
		for from := i; ; {
			j := strings.Index(line[from:], " pass:")
			if j < 0 {
				break
			}
			from += j + len(" pass:")
			spans = appendWord(line, from, cliPasswordRule, spans)
		}
	}
	if strings.Contains(lower, "--password-stdin") {
		spans = echoedPassword(line, spans)
	}
	if i := indexWord(lower, "htpasswd"); i >= 0 {
		spans = htpasswdPassword(line, i, spans)
	}
	return spans
}

// echoedPassword appends what is echoed into a --password-stdin:
// echo PASS | docker login --password-stdin.
func echoedPassword(line string, spans []span) []span {
	i := indexWord(line, "echo")
	pipe := strings.IndexByte(line, '|')
	if i < 0 || pipe < i {
		return spans
	}
	start := i + len("echo")
	for {
		for start < pipe && line[start] == ' ' {
			start++
		}
		if !strings.HasPrefix(line[start:], "-n ") && !strings.HasPrefix(line[start:], "-e ") {
			break
		}
		start += 3
	}
	return appendWord(line, start, cliPasswordRule, spans)
}

// htpasswdPassword appends the password htpasswd -b takes as its last
// argument: htpasswd -bc .htpasswd admin PASS.
func htpasswdPassword(line string, at int, spans []span) []span {
	end := len(line)
	if j := strings.IndexAny(line[at:], "|;&"); j >= 0 {
		end = at + j
	}
	args := strings.Fields(line[at:end])
	batch, operands := false, 0
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			batch = batch || strings.Contains(a, "b")
		} else {
			operands++
		}
	}
	if !batch || operands < 3 {
		return spans
	}
	last := strings.TrimRight(line[:end], " ")
	start := strings.LastIndexByte(last, ' ') + 1
	return appendWord(line, start, cliPasswordRule, spans)
}

// indexWord finds word in s where it is not part of a longer name.
func indexWord(s, word string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], word)
		if i < 0 {
			return -1
		}
		i += from
		j := i + len(word)
		if (i == 0 || !isNameChar(s[i-1])) && (j == len(s) || !isAlnum(s[j])) {
			return i
		}
		from = j
	}
}

// flagValue appends the value of flag (" -p") found after line[from:]: the
// rest of the word, or with spaced, the next word.
func flagValue(line string, from int, flag string, spaced bool, spans []span) []span {
	i := strings.Index(line[from:], flag)
	if i < 0 {
		return spans
	}
	start := from + i + len(flag)
	if spaced {
		if start >= len(line) || line[start] != ' ' {
			return spans
		}
		for start < len(line) && line[start] == ' ' {
			start++
		}
	}
	return appendWord(line, start, cliPasswordRule, spans)
}

// appendWord appends the word at line[start:], inside its quotes if any, as
// a secret unless it is a placeholder or a variable.
func appendWord(line string, start int, rule string, spans []span) []span {
	if start >= len(line) {
		return spans
	}
	end := start
	if isQuote(line[start]) {
		start++
		end = closingQuote(line, start, line[start-1])
	} else {
		for end < len(line) && !strings.ContainsRune(" \t\r;|&)\"'`", rune(line[end])) {
			end++
		}
	}
	v := line[start:end]
	if placeholderValue(v) || v[0] == '-' {
		return spans
	}
	return append(spans, span{start, end, rule})
}

// userPassword appends the password of curl's and wget's -u user:PASS.
func userPassword(line string, from int, spans []span) []span {
	for _, flag := range []string{" -u ", " --user ", " --user="} {
		i := strings.Index(line[from:], flag)
		if i < 0 {
			continue
		}
		start := from + i + len(flag)
		end := start
		q := byte(0)
		if start < len(line) && isQuote(line[start]) {
			q = line[start]
			start++
			end = closingQuote(line, start, q)
		} else {
			for end < len(line) && line[end] != ' ' && line[end] != '\t' && line[end] != '\r' {
				end++
			}
		}
		colon := strings.IndexByte(line[start:end], ':')
		if colon < 0 {
			continue
		}
		return appendWordRange(line, start+colon+1, end, spans)
	}
	return spans
}

func appendWordRange(line string, start, end int, spans []span) []span {
	if placeholderValue(line[start:end]) {
		return spans
	}
	return append(spans, span{start, end, cliPasswordRule})
}

// authSchemes come before the credentials in an Authorization header.
var authSchemes = []string{"basic", "bearer", "token", "digest", "negotiate", "ntlm", "apikey", "api-key", "oauth", "jwt", "sso-key", "ssws", "key", "hmac", "aws4-hmac-sha256"}

// authorizationValue reads the credentials of an Authorization header whose
// value starts at line[pos:], after the key and its separator, keeping the
// scheme: Authorization: Bearer [REDACTED:authorization-header].
func authorizationValue(line string, pos int, spans []span) []span {
	for pos < len(line) && (line[pos] == ' ' || line[pos] == '\t') {
		pos++
	}
	q := byte(0)
	if pos < len(line) && isQuote(line[pos]) {
		q = line[pos]
		pos++
	}
	lower := asciiLower(line[pos:min(len(line), pos+20)])
	for _, s := range authSchemes {
		if strings.HasPrefix(lower, s) && len(lower) > len(s) && lower[len(s)] == ' ' {
			pos += len(s)
			for pos < len(line) && line[pos] == ' ' {
				pos++
			}
			break
		}
	}
	end := pos
	if q != 0 {
		end = closingQuote(line, pos, q)
	} else {
		for end < len(line) && !strings.ContainsRune(" \t\r\"'`,;)}", rune(line[end])) {
			end++
		}
	}
	v := line[pos:end]
	if len(v) < minSecretLen || placeholderValue(v) || (q == 0 && isReference(v)) {
		return spans
	}
	return append(spans, span{pos, end, authorizationRule})
}

// scanBearer appends bearer tokens written without a header name before
// them: "Bearer eyJhbGciOi...", as code building a header spells them.
func scanBearer(line string, spans []span) []span {
	for from := 0; ; {
		i := strings.Index(line[from:], "earer ")
		if i < 0 {
			return spans
		}
		i += from
		from = i + len("earer ")
		if i == 0 || (line[i-1] != 'B' && line[i-1] != 'b') || (i > 1 && isAlnum(line[i-2])) {
			continue
		}
		start := from
		end := start
		for end < len(line) && (isAlnum(line[end]) || strings.IndexByte("._~+/=-", line[end]) >= 0) {
			end++
		}
		v := line[start:end]
		if len(v) < 16 || !credentialLike(v) || isLetters(v) {
			continue
		}
		spans = append(spans, span{start, end, authorizationRule})
	}
}
