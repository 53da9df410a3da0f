package config

import (
	"reflect"
	"strings"
	"testing"
)

// Every toml-tagged field of Config and of its tables has a row in Keys,
// and every row names a field: the template `seat init` writes cannot drift
// from the definition. A field added to Config fails here until it is
// documented.
func TestKeysCoverConfig(t *testing.T) {
	t.Parallel()
	fields := map[string]bool{}
	for _, f := range configFields(reflect.TypeOf(Config{}), "", "", false) {
		fields[f.key] = true
	}
	rows := map[string]bool{}
	for _, k := range Keys {
		if rows[k.Key] {
			t.Errorf("Keys documents %q twice", k.Key)
		}
		rows[k.Key] = true
		if !fields[k.Key] {
			t.Errorf("Keys documents %q, which is no toml field of Config", k.Key)
		}
		if strings.TrimSpace(k.Comment) == "" {
			t.Errorf("Keys %q has no comment", k.Key)
		}
	}
	for f := range fields {
		if !rows[f] {
			t.Errorf("seat.toml key %q (a field of Config) has no row in Keys: add its comment, default and allowed values", f)
		}
	}
	if len(fields) < 40 {
		t.Fatalf("the walk found only %d keys: it no longer sees the tables", len(fields))
	}
}
