package gittest

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// SecretsRepo commits an AWS key in a config file, a GitHub token in code,
// a private key, and a bare random credential in a commit message. The
// secrets are generated, so that this repository holds none; secrets
// maps each redaction rule's name to the secret it should catch.
func SecretsRepo(t testing.TB) (dir string, secrets map[string]string) {
	rng := rand.New(rand.NewPCG(7, 8))
	gen := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	secrets = map[string]string{
		"aws-access-token":    "AKIA" + gen("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"github-pat":          "ghp_" + gen(alnum, 36),
		"high-entropy-string": gen(alnum, 40),
	}
	var pem strings.Builder
	pem.WriteString("-----BEGIN OPENSSH PRIVATE KEY-----\n")
	for range 8 {
		pem.WriteString(gen(alnum+"+/", 70) + "\n")
	}
	pem.WriteString("-----END OPENSSH PRIVATE KEY-----\n")
	secrets["private-key"] = strings.Split(pem.String(), "\n")[3] // one line of its body

	r := New(t)
	r.Write("README.md", "# service\n").Commit("Start the service")
	r.Write("config/aws.ini", "[default]\naws_access_key_id = "+secrets["aws-access-token"]+"\nregion = eu-west-1\n").
		Commit("Add the AWS configuration")
	r.Write("deploy.go", "package deploy\n\nconst token = \""+secrets["github-pat"]+"\"\n").
		Write("id_ed25519", pem.String()).
		Commit("Deploy with a token and a key")
	r.Write("README.md", "# service\n\nDeployed.\n").
		Commit("Rotate the staging credentials\n\nThe new one is " + secrets["high-entropy-string"] + ", see the vault.")
	return r.Dir, secrets
}
