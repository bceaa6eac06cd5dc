package redact

import (
	"regexp"
	"slices"
	"strings"
)

// Scrubbed is what Scrub writes in place of a known secret.
const Scrubbed = "<redacted>"

// MinSecretLen is the shortest value Scrub takes for a secret. Local
// servers accept placeholder keys ("ollama", "EMPTY", "lm-studio") that
// guard nothing, and scrubbing those from answers would mangle every answer
// that names them; real keys run from 40 characters up.
const MinSecretLen = 12

// Scrub replaces every occurrence of secret in s, in any mix of upper and
// lower case, with "<redacted>": a server that echoes a key (in an error,
// or a model repeating its prompt) must not get it stored or shown.
func Scrub(s, secret string) string {
	if len(secret) < MinSecretLen || len(s) < len(secret) {
		return s
	}
	// ASCII case folding keeps every byte where it was, so offsets found
	// in the folded copy hold in s. Keys are ASCII.
	folded, foldedSecret := asciiLower(s), asciiLower(secret)
	if !strings.Contains(folded, foldedSecret) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(folded, foldedSecret)
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(Scrubbed)
		s, folded = s[i+len(secret):], folded[i+len(secret):]
	}
	b.WriteString(s)
	return b.String()
}

// Secrets are the values of the secrets in digest's environment: the API
// keys of every provider, whatever variable a model configuration names,
// and the tokens a CI job carries. Whatever the source of a text (a dataset,
// a file a config names, a model's answer), none of them is sent, stored or
// reported: Scrub replaces them, exactly and in any case.
type Secrets []string

// secretName is an environment variable whose name says it holds a secret.
// Words of a name count whole: DIGEST_TOKENIZER holds no token. A
// password counts anywhere: PGPASSWORD.
var secretName = regexp.MustCompile(`(?i)(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWD|CREDENTIALS?)(_|$)|PASSWORD`)

// EnvSecrets are the secrets in environ (KEY=VALUE lines, as os.Environ
// gives them): the values of variables whose names say they hold a secret
// (OPENAI_API_KEY, ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
// PGPASSWORD, ...), and of the variables named, which hold keys whatever
// they are called (a --model-config's api_key_env). Values shorter than
// MinSecretLen are left out: they are placeholders, not secrets.
func EnvSecrets(environ []string, named ...string) Secrets {
	var out Secrets
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < MinSecretLen {
			continue
		}
		if secretName.MatchString(name) || slices.Contains(named, name) {
			out = append(out, value)
		}
	}
	// The longest first: a key that holds another is replaced whole.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// Scrub replaces every secret of s in text.
func (s Secrets) Scrub(text string) string {
	for _, secret := range s {
		text = Scrub(text, secret)
	}
	return text
}
