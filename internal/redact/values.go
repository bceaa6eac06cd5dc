package redact

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// Minimum lengths of a value worth a marker: a password may be short, a
// token, key or secret of fewer characters is a name or a flag.
const (
	minPasswordLen   = 3
	minSecretLen     = 6
	minStrictLen     = 12 // a value under a name that may hold other things
	minAuthLen       = 8  // user:password in base64 is at least this long
	minPasswordDigit = 6  // a password of digits only, a PIN, is one from this long
)

// nonSecretWords are values that configure rather than authenticate.
var nonSecretWords = map[string]bool{
	"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"null": true, "nil": true, "none": true, "undefined": true, "enabled": true,
	"disabled": true, "required": true, "optional": true, "n/a": true, "na": true,
	"tbd": true, "todo": true, "empty": true, "unset": true, "unknown": true,
	"redacted": true, "hidden": true, "masked": true, "omitted": true, "removed": true,
	"string": true, "str": true, "bool": true, "int": true, "bytes": true, "object": true,
	// fetch's credentials option, and HTTP authentication schemes.
	"include": true, "same-origin": true, "omit": true, "basic": true, "bearer": true,
	"digest": true, "oauth": true, "oauth2": true, "jwt": true, "ldap": true, "saml": true,
	"oidc": true, "kerberos": true, "ntlm": true, "negotiate": true, "mtls": true,
	"tls": true, "iam": true, "hmac": true, "anonymous": true, "trust": true, "peer": true,
	"md5": true, "scram-sha-256": true, "plain": true, "login": true, "cram-md5": true,
	"xoauth2": true, "password": true, "token": true, "apikey": true, "api_key": true,
	"api-key": true, "header": true, "query": true, "cookie": true, "env": true,
	// The words examples are made of.
	"foo": true, "bar": true, "baz": true, "qux": true, "quux": true, "foobar": true,
	"example": true, "sample": true, "dummy": true, "fake": true, "mock": true,
}

// referenceSchemes start values that point at a secret kept elsewhere.
var referenceSchemes = []string{
	"vault:", "arn:", "op://", "ref+", "sm://", "ssm:", "secretsmanager:", "gcp:",
	"awssm:", "env:", "file:", "keyvault:", "k8s:", "secret:", "secretref:", "azure:",
}

// fileExtensions end values that are paths to a file holding the secret.
var fileExtensions = []string{
	".pem", ".key", ".json", ".txt", ".p12", ".pfx", ".crt", ".cer", ".der", ".env",
	".yaml", ".yml", ".gpg", ".asc", ".jks", ".keystore", ".pub", ".ppk", ".conf",
	".cfg", ".ini", ".properties", ".xml", ".toml", ".secret", ".age", ".enc",
}

// isSecret decides whether v, given to a key of a.cat, is a secret: not
// empty, a placeholder, a reference to a value kept elsewhere, a switch or
// a count, and, where code could be meant, not another variable. next is
// the first character after the value and its closing quote.
func (a *assignment) isSecret(v string, quoted bool, next byte) bool {
	v = strings.TrimSpace(v)
	if v == "" || strings.HasPrefix(v, markerPrefix) || isPlaceholder(v) {
		return false
	}
	lv := asciiLower(v)
	if nonSecretWords[lv] || isPathOrURL(v) || isPublicKey(lv) {
		return false
	}
	if n, ok := numberish(v); ok {
		return a.cat == passwordKey && n >= minPasswordDigit
	}
	if quoted && (isLabel(lv, a.name) || namesSecret(v, a.name)) {
		return false
	}
	if !quoted {
		if isReference(v) || !a.literal && a.isVariable(v, next) {
			return false
		}
		// In KEY=value and --flag value, as in shell and .env files, a dot is
		// part of the password; in code, cfg.Password is a field.
		shell := a.op == opSpace || a.op == opEquals && !a.spaced && next != ',' && next != ')'
		if !shell && isFieldPath(v) {
			return false
		}
		if a.op == opColon && isLetter(next) {
			// "token: expires after an hour" is a sentence, not a value.
			a.op = opProse
		}
	}
	if a.op == opProse && !passwordLike(v, quoted) {
		return false
	}
	switch {
	case a.cat == passwordKey:
		return len(v) >= minPasswordLen
	case a.cat == credentialKey && a.strict:
		return len(v) >= minAuthLen && (isBasicCredentials(v) || credentialLike(v) && !isName(v))
	case a.strict:
		return len(v) >= minStrictLen && madeToBeSecret(v)
	}
	return len(v) >= minSecretLen
}

// isBasicCredentials is the base64 of user:password, as HTTP basic
// authentication and Docker's config.json carry them.
func isBasicCredentials(v string) bool {
	decoded, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		decoded, err = base64.RawStdEncoding.DecodeString(v)
	}
	if err != nil || !utf8.Valid(decoded) {
		return false
	}
	for _, r := range string(decoded) {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	colon := strings.IndexByte(string(decoded), ':')
	return colon > 0 && colon < len(decoded)-1
}

// isName is a value that reads as the name of something rather than as a
// credential: allowUnreachable, init.defaultBranch, user.signingKey.
func isName(v string) bool {
	return (isIdentLike(v) || isFieldPath(v)) && !looksRandom(v, "")
}

// isPublicKey is an SSH public key: ssh-ed25519 AAAA...
func isPublicKey(lv string) bool {
	for _, p := range []string{"ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-"} {
		if strings.HasPrefix(lv, p) {
			sp := strings.IndexByte(lv, ' ')
			return sp > 0 && strings.HasPrefix(lv[sp+1:], "aaaa")
		}
	}
	return false
}

// madeToBeSecret is a value no one would choose as a name: long hex, or a
// random-looking mix of letters and digits, the shapes of generated keys.
func madeToBeSecret(v string) bool {
	if strings.ContainsAny(v, " \t") {
		return false
	}
	if isHexString(v) {
		return len(v) >= 16 && strings.IndexFunc(v, func(r rune) bool { return r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' }) >= 0
	}
	return looksRandom(v, "")
}

// placeholderValue is a value given in a URL, a header or a command line
// that stands for a secret without being one.
func placeholderValue(v string) bool {
	return v == "" || strings.HasPrefix(v, markerPrefix) || isPlaceholder(v) ||
		isFormatVerb(v) || nonSecretWords[asciiLower(v)]
}

// isPlaceholder reports values that stand for a secret without being one:
// masks, templates, variables, and instructions to the reader.
func isPlaceholder(v string) bool {
	if isMask(v) {
		return true
	}
	for _, t := range []string{"${", "{{", "{%", "<%", "#{", "$(", "%("} {
		if strings.Contains(v, t) {
			return true
		}
	}
	switch {
	case v[0] == '<' && (len(v) == 1 || v[len(v)-1] == '>' || strings.ContainsAny(v[1:], " -_")):
		return true
	case v[0] == '$' && len(v) > 1 && (isLetter(v[1]) || v[1] == '_' || v[1] == '{'):
		return true
	case len(v) > 2 && v[0] == '%' && v[len(v)-1] == '%':
		return true
	case len(v) >= 2 && v[0] == '%' && isFormatVerb(v):
		return true
	case v[0] == '{' && v[len(v)-1] == '}' && isIdentLike(v[1:len(v)-1]):
		return true
	case len(v) > 2 && v[0] == '@' && v[len(v)-1] == '@':
		return true
	case len(v) > 4 && strings.HasPrefix(v, "__") && strings.HasSuffix(v, "__"):
		return true
	case strings.HasSuffix(v, "...") || strings.HasSuffix(v, "…"):
		return true
	}
	lv := asciiLower(v)
	return strings.HasPrefix(lv, "your") || strings.HasSuffix(lv, "here") ||
		strings.Contains(lv, "replace") || strings.Contains(lv, "placeholder") ||
		strings.HasPrefix(lv, "insert") || strings.HasPrefix(lv, "enter-") || strings.HasPrefix(lv, "enter_")
}

// isMask is a value hidden already: ***, xxxx, ••••, ....
func isMask(v string) bool {
	marks := 0
	for _, r := range v {
		switch r {
		case '*', 'x', 'X', '.', '•', '#':
			marks++
		case '-', '_', ' ':
		default:
			return false
		}
	}
	return marks > 0
}

func isFormatVerb(v string) bool {
	i := 1
	for i < len(v) && strings.IndexByte("-+# 0123456789.", v[i]) >= 0 {
		i++
	}
	return i == len(v)-1 && isLetter(v[i])
}

// isReference reports values, given without quotes, that name another
// value: a variable, a call, a YAML alias or tag, a secret store.
func isReference(v string) bool {
	switch v[0] {
	case '$', '&', '*', '%', '{', '[', '(', '<', '|', '>', '\\':
		return true
	case '!':
		return isLetters(v[1:])
	}
	if strings.ContainsAny(v, "([{") {
		return true // a call, an index, a literal: os.environ["X"], refs[i], T{
	}
	lv := asciiLower(v)
	for _, s := range referenceSchemes {
		if strings.HasPrefix(lv, s) {
			return true
		}
	}
	return false
}

// isFieldPath is a dotted or indexed path: cfg.Password, process.env.TOKEN,
// os.environ["X"], this->password, Config::get.
func isFieldPath(v string) bool {
	parts := 0
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && (isAlnum(v[j]) || v[j] == '_' || v[j] == '$') {
			j++
		}
		if j == i || isDigit(v[i]) {
			return false
		}
		parts++
		i = j
		if i == len(v) {
			break
		}
		switch {
		case v[i] == '.':
			i++
		case strings.HasPrefix(v[i:], "->"), strings.HasPrefix(v[i:], "::"):
			i += 2
		case v[i] == '[':
			k := strings.IndexByte(v[i:], ']')
			if k < 0 {
				return false
			}
			i += k + 1
			parts++
			if i < len(v) && v[i] == '.' {
				i++
			}
			if i == len(v) {
				return true
			}
		default:
			return false
		}
	}
	return parts > 1
}

// isVariable reports a value that, where the line may be code, is more
// likely another variable than a literal: Password: password, token: tok,
// password = self_password, connect(password=pw).
func (a *assignment) isVariable(v string, next byte) bool {
	if !isIdentLike(v) || a.op == opProse {
		return false
	}
	switch next {
	case ',', ')', '}', '<':
		return true // an argument, a field, a type: Option<String>
	case ';':
		if a.op != opEquals || a.spaced {
			return true
		}
	}
	if a.op == opSpace || (a.op == opEquals && !a.spaced) {
		return false // KEY=value, --password value: shell and .env
	}
	lv := asciiLower(v)
	if lv == asciiLower(a.name) || hasSecretWord(v) {
		return true
	}
	if words := splitWords(a.name); len(words) > 0 && lv == words[len(words)-1] {
		return true
	}
	return a.op == opEquals && a.indented
}

// isLabel reports a quoted value that is text about the secret rather than
// it, as in a translation file: "password": "Password", "Enter your password".
func isLabel(lv, name string) bool {
	words := splitWords(name)
	if len(words) > 0 && lv == words[len(words)-1] && len(words) == 1 && name != asciiLower(name) {
		return true
	}
	if !strings.Contains(lv, " ") {
		return false
	}
	return strings.ContainsAny(lv[len(lv)-1:], ".?!:") || containsKeyWord(lv)
}

// namesSecret reports a quoted value that is the name of a secret rather
// than one: a configuration key (signingKey = "signingKey", gpgSignKey =
// "gpgSign") or a placeholder naming what goes there ("github_access_token").
func namesSecret(v, keyName string) bool {
	if !isIdentLike(v) && !isFieldPath(v) {
		return false
	}
	lv := asciiLower(v)
	if strings.HasPrefix(asciiLower(keyName), lv) || strings.HasSuffix(lv, asciiLower(keyName)) {
		return true
	}
	return hasSecretWord(v) && !strings.ContainsAny(v, "0123456789")
}

// hasSecretWord reports a name built of words, one of which names a secret:
// userPassword, github_access_token, newApiKey.
func hasSecretWord(v string) bool {
	words := splitWords(v)
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		if cat, _ := classifyKey(w); cat != notSecret || w == "key" {
			return true
		}
	}
	return false
}

// passwordLike is a value in a sentence that reads as a password rather than
// as the next word: "the password is hunter2", not "the password is wrong".
func passwordLike(v string, quoted bool) bool {
	if quoted {
		return len(v) >= minPasswordLen
	}
	if len(v) < 6 || isVersion(v) || strings.Contains(v, "/") {
		return false
	}
	var letter, other bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isLetter(c):
			letter = true
		case c == '-' || c == '\'':
		default:
			other = true
		}
	}
	return letter && other
}

// credentialLike is a value that looks made to be hard to guess: letters
// and digits, or both cases, or symbols.
func credentialLike(v string) bool {
	var upper, lower, digit, symbol bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isUpper(c):
			upper = true
		case isLower(c):
			lower = true
		case isDigit(c):
			digit = true
		case c == ' ':
			return false
		default:
			symbol = true
		}
	}
	return (upper || lower) && (digit || symbol || upper && lower)
}

// numberish is a number, a size or a duration, and how many digits it has:
// 3600, 2048, 30s, 1.5.
func numberish(v string) (int, bool) {
	digits, i := 0, 0
	for i < len(v) && (isDigit(v[i]) || v[i] == '.' || v[i] == '_') {
		if isDigit(v[i]) {
			digits++
		}
		i++
	}
	if digits == 0 {
		return 0, false
	}
	switch asciiLower(v[i:]) {
	case "", "ms", "s", "m", "h", "d", "w", "y", "k", "kb", "mb", "gb", "b":
		return digits, true
	}
	return 0, false
}

func isVersion(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	dots := 0
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '.':
			dots++
		case !isDigit(v[i]):
			return false
		}
	}
	return dots > 0
}

// isPathOrURL is a path to a file or a URL: the secret is elsewhere. A
// random-looking value that starts with a slash is base64.
func isPathOrURL(v string) bool {
	lv := asciiLower(v)
	switch {
	case strings.Contains(lv, "://"):
		return true
	case strings.HasPrefix(lv, "/"), strings.HasPrefix(lv, "./"), strings.HasPrefix(lv, "../"),
		strings.HasPrefix(lv, "~/"), len(lv) > 2 && lv[1] == ':' && lv[2] == '\\':
		return strings.ContainsAny(v, ".~-_\\") || !looksRandom(v, "")
	}
	return !strings.Contains(lv, " ") && hasAnySuffix(lv, fileExtensions...)
}

func isLetter(c byte) bool { return isUpper(c) || isLower(c) }

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return s != ""
}

// isIdentLike is a name a program could give a variable.
func isIdentLike(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}
