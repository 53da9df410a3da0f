package telemetry_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/telemetry"
)

// jsonNames lists every JSON field name reachable from t (embedded structs
// flattened, as encoding/json does).
func jsonNames(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t.PkgPath() == "time" {
		return
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			jsonNames(f.Type, seen, out)
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "omitempty") {
			out["omitempty:"+name] = true
		}
		out[name] = true
		jsonNames(f.Type, seen, out)
	}
}

// TestEveryJSONFieldIsDocumented keeps docs/telemetry.md and the schema in step:
// every field name of the status document and of a watch line is listed there,
// and none is ever left out of the JSON (no omitempty: null says "unknown").
func TestEveryJSONFieldIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	seen := map[reflect.Type]bool{}
	jsonNames(reflect.TypeOf(telemetry.Document{}), seen, names)
	jsonNames(reflect.TypeOf(telemetry.Change{}), seen, names)
	for n := range names {
		if strings.HasPrefix(n, "omitempty:") {
			t.Errorf("field %s is omitempty: an unknown value must appear as null", strings.TrimPrefix(n, "omitempty:"))
			continue
		}
		if !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("JSON field %q is not documented in docs/telemetry.md", n)
		}
	}
	if len(names) < 40 {
		t.Fatalf("found only %d field names: the walk is broken", len(names))
	}
}
