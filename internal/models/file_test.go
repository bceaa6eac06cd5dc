package models

import (
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

// TestResolveLayersTableFileAndFlags: the flags win over the models file,
// which wins over the built-in table; a bad --price is an error.
func TestResolveLayersTableFileAndFlags(t *testing.T) {
	spec := provider.Spec{Provider: "openai", Model: "gpt-4o-mini"}
	table := Lookup(spec)
	file := File{spec.String(): {RPM: 7, TPM: 700}}
	got, err := file.Resolve(spec, Overrides{})
	if err != nil || got.RPM != 7 || got.TPM != 700 || got.Price != table.Price || !got.Known {
		t.Errorf("file over table: %+v, %v", got, err)
	}
	got, err = file.Resolve(spec, Overrides{RPM: 9, Price: "1/2"})
	if err != nil || got.RPM != 9 || got.TPM != 700 || got.Price != (Price{InputPerM: 1, OutputPerM: 2}) {
		t.Errorf("flags over file: %+v, %v", got, err)
	}
	unknown := provider.Spec{Provider: "openai", Model: "no-such-model"}
	if got, _ := (File{}).Resolve(unknown, Overrides{Price: "0.5/1"}); !got.Known {
		t.Errorf("--price makes a model's price known: %+v", got)
	}
	if _, err := (File{}).Resolve(spec, Overrides{Price: "cheap"}); err == nil {
		t.Error("a bad --price accepted")
	}
}
