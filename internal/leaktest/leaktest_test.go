package leaktest

import (
	"slices"
	"testing"
)

// TestFindSeesWholeAndCutSecrets: Find names a secret written whole, and
// one cut after its first characters (its last two thirds), and nothing
// in a text holding neither, so a search that finds nothing means it.
func TestFindSeesWholeAndCutSecrets(t *testing.T) {
	const openai = "sk-proj-evalsecret-4b9e1c7d2a6f8e0b3c5d"
	const anthropic = "sk-ant-api03-evalsecret-9d8c7b6a5f4e3d2c1b0a"
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"Authorization: Bearer " + openai + "\n", []string{openai}},
		{"…" + anthropic[len(anthropic)/3:], []string{anthropic[len(anthropic)/3:]}},
		{"key: sk-proj-…", nil},
	} {
		if got := Find([]byte(tt.text), openai, anthropic); !slices.Equal(got, tt.want) {
			t.Errorf("Find(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
