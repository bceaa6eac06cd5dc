package models

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// File is a models file: the figures of the user's own account, by model
// spec, over the built-in table. For example:
//
//	{"openai:gpt-4o-mini": {"rpm": 5000, "tpm": 4000000},
//	 "openai:my-finetune": {"price": {"input_per_million": 0.3, "output_per_million": 1.2}}}
type File map[string]Info

// LoadFile reads a models file.
func LoadFile(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("models file: %w", err)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("models file %s: %v. Try: a JSON object such as {\"openai:gpt-4o-mini\": {\"rpm\": 500, \"tpm\": 200000}}", path, err)
	}
	for spec, info := range f {
		if _, err := provider.ParseSpec(spec); err != nil {
			return nil, fmt.Errorf("models file %s: %v", path, err)
		}
		if info.RPM < 0 || info.TPM < 0 || info.Price.InputPerM < 0 || info.Price.OutputPerM < 0 {
			return nil, fmt.Errorf("models file %s: %s has a negative figure", path, spec)
		}
	}
	return f, nil
}

// Lookup is Lookup with the file's figures, where it gives them, taking
// precedence over the built-in ones.
func (f File) Lookup(spec provider.Spec) Info {
	info := Lookup(spec)
	mine, ok := f[spec.String()]
	if !ok {
		return info
	}
	if mine.RPM > 0 {
		info.RPM = mine.RPM
	}
	if mine.TPM > 0 {
		info.TPM = mine.TPM
	}
	if mine.Price != (Price{}) {
		info.Price = mine.Price
		info.Known = true
	}
	return info
}

// ParsePrice reads a --price value: "INPUT/OUTPUT" in dollars per million tokens.
func ParsePrice(s string) (Price, error) {
	in, out, ok := strings.Cut(s, "/")
	p := Price{}
	var err1, err2 error
	p.InputPerM, err1 = strconv.ParseFloat(strings.TrimSpace(in), 64)
	p.OutputPerM, err2 = strconv.ParseFloat(strings.TrimSpace(out), 64)
	if !ok || err1 != nil || err2 != nil || p.InputPerM < 0 || p.OutputPerM < 0 {
		return Price{}, fmt.Errorf("--price %q is not INPUT/OUTPUT dollars per million tokens. Try: --price 0.15/0.60", s)
	}
	return p, nil
}
