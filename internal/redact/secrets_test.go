package redact

import (
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	const key = "sk-proj-AbC123xyz789QQ"
	for _, c := range []struct{ in, key, want string }{
		{"key " + key + " end", key, "key <redacted> end"},
		{strings.ToUpper(key) + strings.ToLower(key), key, "<redacted><redacted>"},
		{"ümlaut→sK-PrOj-abc123XYZ789qq←ß", key, "ümlaut→<redacted>←ß"},                // multi-byte text around: offsets must hold
		{"sk-proj-AbC123xyz789Q", key, "sk-proj-AbC123xyz789Q"},                        // a prefix is not the key
		{"ollama is a server; OLLAMA too", "ollama", "ollama is a server; OLLAMA too"}, // a placeholder, not a secret
		{"nothing here", key, "nothing here"},
		{"", key, ""},
	} {
		if got := Scrub(c.in, c.key); got != c.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", c.in, c.key, got, c.want)
		}
	}
}

// TestEnvSecretsAreTheKeysOfTheEnvironment: variables whose names say
// they hold a secret, and those a configuration names, are secrets; a
// placeholder or a name that only contains a word (TOKENIZER) is not.
func TestEnvSecretsAreTheKeysOfTheEnvironment(t *testing.T) {
	env := []string{
		"OPENAI_API_KEY=sk-proj-0123456789abcdefghij",
		"ANTHROPIC_API_KEY=sk-ant-api03-0123456789abcdef",
		"GITHUB_TOKEN=ghs_0123456789abcdefghijkl",
		"PGPASSWORD=correct-horse-battery",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"MY_GATEWAY=gw-0123456789abcdefghij", // named by a model configuration
		"DIGEST_TOKENIZER=o200k_base_and_more",
		"HOME=/home/someone/with/a/long/path",
		"OLLAMA_API_KEY=ollama", // a placeholder
		"BROKEN",
	}
	got := EnvSecrets(env, "MY_GATEWAY")
	for _, want := range []string{"sk-proj-0123456789abcdefghij", "sk-ant-api03-0123456789abcdef", "ghs_0123456789abcdefghijkl",
		"correct-horse-battery", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "gw-0123456789abcdefghij"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("%s is not taken for a secret", want)
		}
	}
	if len(got) != 6 {
		t.Errorf("secrets %q, want the 6 keys alone", got)
	}
	text := "env: OPENAI_API_KEY=SK-PROJ-0123456789ABCDEFGHIJ and GITHUB_TOKEN=ghs_0123456789abcdefghijkl in /home/someone/with/a/long/path"
	if s := got.Scrub(text); s != "env: OPENAI_API_KEY=<redacted> and GITHUB_TOKEN=<redacted> in /home/someone/with/a/long/path" {
		t.Errorf("Scrub = %q", s)
	}
}
