package redact

// What the external tests (prompt_test.go) use of the package's insides.
var PEM = pem

const PrivateKeyRule = privateKeyRule
