package redact

import "strings"

// category is what a key's name says its value is.
type category uint8

const (
	notSecret category = iota
	passwordKey
	secretKey
	tokenKey
	apiKey
	credentialKey
	authorizationKey
)

// rule names the marker of a value found by its key's name.
func (c category) rule() string {
	switch c {
	case passwordKey:
		return "password-assignment"
	case secretKey:
		return "secret-assignment"
	case tokenKey:
		return "token-assignment"
	case apiKey:
		return "key-assignment"
	case credentialKey:
		return "credential-assignment"
	case authorizationKey:
		return "authorization-header"
	}
	return ""
}

// keyWords are the parts of key names that may say secret; a run of name
// characters holding none is no key of interest, and is passed over fast.
var keyWords = []string{"pass", "pw", "secret", "token", "key", "auth", "cred", "sig"}

// trailingWords may follow the word that says secret without changing what
// the value is: secret_key_base, password_hash, api_key_b64, db_password_2.
var trailingWords = map[string]bool{
	"value": true, "base": true, "b64": true, "base64": true, "hex": true, "raw": true,
	"str": true, "string": true, "plain": true, "plaintext": true, "clear": true,
	"cleartext": true, "enc": true, "encrypted": true, "encoded": true, "hash": true,
	"hashed": true, "data": true, "content": true, "contents": true, "material": true,
	"bytes": true, "literal": true, "confirm": true, "confirmation": true,
}

// keyQualifiers make a "key" a secret one: api_key, AccountKey, signingKey.
var keyQualifiers = []string{
	"api", "access", "secret", "private", "signing", "sign", "encryption", "encrypt",
	"decryption", "master", "client", "auth", "account", "shared", "webhook", "license",
	"licence", "hmac", "jwt", "consumer", "app", "application", "integration", "admin",
	"storage", "subscription", "service", "deploy", "cipher", "crypto", "aes", "otp",
	"totp", "mfa", "root", "sas",
}

// keyNonQualifiers make a "key", "token" or "secret" name something else:
// a database's primary_key, a cache_key, a public_key, a page token.
var keyNonQualifiers = []string{
	"public", "pub", "publishable", "primary", "sort", "partition", "foreign", "cache",
	"map", "site", "object", "routing", "idempotency", "lookup", "i18n", "translation",
	"hot", "short", "unique", "composite", "hash", "range", "row", "column", "index",
	"group", "entry", "field", "attr", "attribute", "label", "state", "context", "ctx",
	"dedup", "dedupe", "cursor", "page", "next", "continuation", "cancel", "cancellation",
	"pagination", "resume", "sync", "start", "end", "stop", "eof", "lex", "parse",
	"syntax", "max", "num", "count", "total", "sharding", "shard", "lock", "message",
	"event", "queue", "topic", "stream", "registry", "config", "setting", "meta", "tag",
	"json", "yaml", "dict", "value", "item", "record", "node", "parent", "child", "sub",
	"mon", "tur", "don", "jock", "hoc", "whis",
}

// passPrefixes are the names a bare "pass" is run together with: DBPASS.
var passPrefixes = []string{"db", "admin", "root", "user", "mysql", "pg", "redis", "smtp", "mail", "ftp", "ldap", "sql", "vnc", "wifi", "sa"}

// classifyKey says what the name of a key says of its value, and whether
// the value must also look like a credential to count (strict): a name
// such as WEATHER_KEY or bare "auth" may hold other things.
func classifyKey(name string) (cat category, strict bool) {
	words := splitWords(name)
	for len(words) > 1 && (trailingWords[words[len(words)-1]] || isDigits(words[len(words)-1])) {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return notSecret, false
	}
	last := words[len(words)-1]
	var before string // the word before last, or what last has run together before its suffix
	if len(words) > 1 {
		before = words[len(words)-2]
	}
	if last == "id" && len(words) > 1 {
		// private_key_id of a Google service account is as secret.
		if n := len(words); (n > 2 && words[n-3] == "private" && before == "key") || before == "privatekey" {
			return apiKey, false
		}
		return notSecret, false
	}
	switch {
	case last == "authorization":
		return authorizationKey, false
	case last == "requirepass" || last == "masterauth":
		return passwordKey, false
	case hasAnySuffix(last, "password", "passwd", "passphrase", "pwd", "passcode", "passwort"):
		return passwordKey, false
	case last == "pass" || last == "pw" || last == "pword":
		return passwordKey, false
	case strings.HasSuffix(last, "pass") && hasAny(last[:len(last)-4], passPrefixes):
		return passwordKey, false
	case strings.HasSuffix(last, "secret"):
		if qualifiedOut(words, last, "secret") {
			return notSecret, false
		}
		return secretKey, false
	case strings.HasSuffix(last, "token"):
		if qualifiedOut(words, last, "token") {
			return notSecret, false
		}
		return tokenKey, false
	case strings.HasSuffix(last, "key"):
		q := last[:len(last)-3]
		if q == "" {
			q = before
		}
		// A whole word decides first; one run together with "key" by
		// its ending, where "accountkey" ends in "count" as well.
		switch {
		case q == "":
			return notSecret, false
		case hasAny(q, keyNonQualifiers):
			return notSecret, false
		case hasAnySuffix(q, keyQualifiers...):
			return apiKey, false
		case hasAnySuffix(q, keyNonQualifiers...):
			return notSecret, false
		}
		return apiKey, true
	case last == "auth" || (strings.HasSuffix(last, "auth") && !strings.HasSuffix(last, "oauth")):
		return credentialKey, true
	case last == "cred" || hasAnySuffix(last, "credential", "credentials", "creds"):
		return credentialKey, false
	case asciiLower(name) == "sig":
		return tokenKey, true
	}
	return notSecret, false
}

// qualifiedOut reports whether the word before a token or secret, or run
// together before it, makes it no secret: next_page_token.
func qualifiedOut(words []string, last, suffix string) bool {
	q := last[:len(last)-len(suffix)]
	if q == "" && len(words) > 1 {
		q = words[len(words)-2]
	}
	return q != "" && hasAnySuffix(q, keyNonQualifiers...)
}

// splitWords splits a key's name into lower-case words at punctuation and
// case changes: "spring.datasource.password" and "DBPassword" and
// "x-api-key" give their words.
func splitWords(name string) []string {
	var words []string
	wordStart := -1
	flush := func(end int) {
		if wordStart >= 0 && end > wordStart {
			words = append(words, asciiLower(name[wordStart:end]))
		}
		wordStart = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if wordStart < 0 {
			wordStart = i
			continue
		}
		p := name[i-1]
		switch {
		case isUpper(c) && isLower(p):
			flush(i)
			wordStart = i
		case isUpper(c) && isUpper(p) && i+1 < len(name) && isLower(name[i+1]):
			flush(i)
			wordStart = i
		}
	}
	flush(len(name))
	return words
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, suf := range suffixes {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	return false
}

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if s == w {
			return true
		}
	}
	return false
}
