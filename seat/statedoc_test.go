package seat

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEveryStateFileIsDocumented: every state file or directory a seat names
// by a method (…Path, …Dir; the inbox's too) has its row in docs/state.md, so
// the reference cannot fall behind the code. A new state file fails here
// until it is documented.
func TestEveryStateFileIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/state.md")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open("/h", "n")
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(s)
	checked := 0
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		if m.Type.NumIn() != 1 || m.Type.NumOut() != 1 || m.Type.Out(0).Kind() != reflect.String ||
			!strings.HasSuffix(m.Name, "Path") && !strings.HasSuffix(m.Name, "Dir") {
			continue
		}
		rel, err := filepath.Rel(s.Dir, v.Method(i).Call(nil)[0].String())
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // not inside the seat directory
		}
		checked++
		// A row names the file as `rel`, a directory as `rel/` or by a file
		// in it (`rel/<id>.toml`).
		if !strings.Contains(string(doc), "`"+rel+"`") && !strings.Contains(string(doc), "`"+rel+"/") {
			t.Errorf("%s (Seat.%s) has no row in docs/state.md", rel, m.Name)
		}
	}
	if checked < 25 {
		t.Fatalf("only %d state paths found on Seat: the reflection walk is broken", checked)
	}
}
