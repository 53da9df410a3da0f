package state_test

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// TestEveryStateFileIsDocumented: every state file or directory a seat names
// by a method (…Path, …Dir; the inbox's too) has its row in docs/state.md, so
// the reference cannot fall behind the code. A new state file fails here
// until it is documented.
func TestEveryStateFileIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/state.md")
	if err != nil {
		t.Fatal(err)
	}
	s, err := state.Open("/h", "n")
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

// TestStateDocMatchesTheRecords: every TOML state file a seat binds to a
// record type (the …File methods of seat/statefile.go) has its row in
// docs/state.md's seat-directory table (or, when that row defers to
// docs/recover.md, in recover's "Files" table), and that row names exactly the
// record's TOML keys: no key on disk left undocumented, no documented key that
// the record does not have. The message-state table is checked against
// inbox.Status the same way, and the two JSON records (inbox/msgs/, events/)
// against their JSON keys. A field is a backquoted snake_case word outside
// parentheses; what stands inside them (values, examples) is prose.
func TestStateDocMatchesTheRecords(t *testing.T) {
	t.Parallel()
	doc := readDoc(t, "../../docs/state.md")
	rows := tableRows(doc, "The seat directory")
	recoverRows := tableRows(readDoc(t, "../../docs/recover.md"), "Files")
	s, err := state.Open("/h", "n")
	if err != nil {
		t.Fatal(err)
	}
	args := map[reflect.Type]reflect.Value{
		reflect.TypeOf(""):          reflect.ValueOf("ID"),
		reflect.TypeOf(0):           reflect.ValueOf(7),
		reflect.TypeOf(time.Time{}): reflect.ValueOf(time.Unix(0, 42)),
	}
	v := reflect.ValueOf(s)
	checked := 0
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		if m.Type.NumOut() != 1 || !strings.HasPrefix(m.Type.Out(0).Name(), "File[") || m.Name == "ConfigFile" {
			continue // not a binding; seat.toml has its own table (TestStateDocListsEveryConfigKey)
		}
		var in []reflect.Value
		for j := 1; j < m.Type.NumIn(); j++ {
			a, ok := args[m.Type.In(j)]
			if !ok {
				t.Fatalf("Seat.%s takes a %s: teach the test a value for it", m.Name, m.Type.In(j))
			}
			in = append(in, a)
		}
		file := v.Method(i).Call(in)[0]
		rel, _ := filepath.Rel(s.Dir, file.MethodByName("Path").Call(nil)[0].String())
		record := file.MethodByName("Read").Type().Out(0)
		checked++
		cell, ok := rowFor(rows, rel)
		if !ok {
			t.Errorf("%s (Seat.%s) has no row in docs/state.md", rel, m.Name)
			continue
		}
		where := "docs/state.md"
		if as := asRow.FindStringSubmatch(cell); as != nil { // "(as `handoff/cycle.toml`)"
			cell, _ = rowFor(rows, as[1])
		}
		if len(docFields(cell)) == 0 && strings.Contains(cell, "docs/recover.md") {
			if cell, ok = rowFor(recoverRows, "seats/<name>/"+rel); !ok {
				t.Errorf("%s: docs/state.md defers to docs/recover.md, which has no row for it", rel)
				continue
			}
			where = "docs/recover.md"
		}
		compareFields(t, where+" "+rel, record, docFields(cell))
	}
	if checked < 20 {
		t.Fatalf("only %d bindings found on Seat: the reflection walk is broken", checked)
	}
	status := map[string]bool{}
	for k := range tableRows(doc, "Message states") {
		maps.Copy(status, docFields(k))
	}
	compareFields(t, "docs/state.md Message states", reflect.TypeOf(inbox.Status{}), status)
	// recover's record of its last sweep, in the state root (docs/recover.md).
	if cell, ok := rowFor(recoverRows, "recover-last.toml"); !ok {
		t.Error("recover-last.toml has no row in docs/recover.md's Files table")
	} else {
		compareFields(t, "docs/recover.md recover-last.toml", reflect.TypeOf(state.LastSweep{}), docFields(cell))
	}
	// The JSON records pantty writes (not bound through statedir: written once).
	for rel, record := range map[string]reflect.Type{
		"inbox/msgs/ID.json":               reflect.TypeOf(inbox.Stored{}),
		"events/1-2-UserPromptSubmit.json": reflect.TypeOf(hookwire.Event{}),
	} {
		cell, ok := rowFor(rows, rel)
		if !ok {
			t.Errorf("%s has no row in docs/state.md", rel)
			continue
		}
		compareFields(t, "docs/state.md "+rel, record, docFields(cell), "json")
	}
}

// TestStateDocListsEveryConfigKey: docs/state.md's seat.toml table names every
// key of config.Keys once, and no key that is not one; a whole table may be
// one row that defers to another document ("[[ladder]], [recovery], [done] …
// docs/recover.md"). Where the table gives a plain default it is the one
// config.Keys declares, and the harness row names every registered harness.
func TestStateDocListsEveryConfigKey(t *testing.T) {
	t.Parallel()
	rows := tableRows(readDoc(t, "../../docs/state.md"), "seat.toml")
	keys := map[string]config.Key{}
	for _, k := range config.Keys {
		keys[k.Key] = k
	}
	documented := map[string]int{}
	tables := map[string]bool{} // tables documented by a row of their own
	for first, cells := range rows {
		table := ""
		for _, tok := range backquoted(first) {
			switch {
			case strings.HasPrefix(tok, "[[") || strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]") && !strings.Contains(first, tok+" "):
				tables[strings.Trim(tok, "[]")] = true
			case strings.HasPrefix(tok, "["): // "`[gates] unmeasured`"
				table, tok, _ = strings.Cut(strings.TrimPrefix(tok, "["), "] ")
				documented[table+"."+tok] += cells.n
			default:
				documented[tok] += cells.n
			}
		}
		if name, ok := soleKey(first); ok {
			if k, known := keys[name]; known {
				checkDefault(t, name, cells.cells[0], k.Default)
			}
		}
	}
	for key, n := range documented {
		if _, ok := keys[key]; !ok {
			t.Errorf("docs/state.md documents seat.toml key %q, which config.Keys does not have", key)
		}
		if n > 1 {
			t.Errorf("docs/state.md documents seat.toml key %q %d times", key, n)
		}
	}
	for key := range keys {
		table, _, dotted := strings.Cut(key, ".")
		if documented[key] == 0 && !(dotted && tables[table]) {
			t.Errorf("seat.toml key %q (config.Keys) has no row in docs/state.md", key)
		}
	}
	names := state.HarnessNames()
	if len(names) < 4 {
		t.Fatalf("only %v registered: the adapters are not", names)
	}
	harness := rows["`harness`"]
	for _, n := range names {
		if !strings.Contains(strings.Join(harness.cells, " "), "`"+n+"`") {
			t.Errorf("docs/state.md's harness row does not name %q", n)
		}
	}
}

var asRow = regexp.MustCompile("\\(as `([^`]+)`\\)")

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// row is a table row: its cells after the first, and how many rows had the
// same first cell.
type row struct {
	cells []string
	n     int
}

// tableRows returns the rows of the tables under the "## " heading that begins
// with section, keyed by their first cell (header and rule rows left out).
func tableRows(doc, section string) map[string]row {
	rows := map[string]row{}
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## "+section)
			continue
		}
		if !in || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := splitRow(line)
		if len(cells) < 2 || cells[0] == "path" || cells[0] == "key" || cells[0] == "field" {
			continue
		}
		r := rows[cells[0]]
		r.cells, r.n = cells[1:], r.n+1
		rows[cells[0]] = r
	}
	return rows
}

// splitRow splits a table row on the pipes outside backquotes.
func splitRow(line string) []string {
	var cells []string
	var b strings.Builder
	code := false
	for _, r := range strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|") {
		switch {
		case r == '`':
			code = !code
		case r == '|' && !code:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
			continue
		}
		b.WriteRune(r)
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// rowFor finds the row whose first cell names rel: a backquoted path in it
// equal to rel once its placeholders (`<id>`, `NNNN`) stand for any name.
func rowFor(rows map[string]row, rel string) (string, bool) {
	for first, r := range rows {
		for _, p := range backquoted(first) {
			pat := regexp.QuoteMeta(p)
			pat = regexp.MustCompile(`<[^>]+>|NNNN`).ReplaceAllString(pat, `[^/]+`)
			if regexp.MustCompile("^" + pat + "$").MatchString(rel) {
				return r.cells[len(r.cells)-1], true
			}
		}
	}
	return "", false
}

func backquoted(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// docFields returns the backquoted snake_case words of cell that stand
// outside parentheses: the fields a row names.
func docFields(cell string) map[string]bool {
	fields := map[string]bool{}
	depth, code := 0, false
	var tok strings.Builder
	for _, r := range cell {
		switch {
		case r == '`' && code:
			if w := tok.String(); depth == 0 && regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(w) {
				fields[w] = true
			}
			code = false
		case r == '`':
			code = true
			tok.Reset()
		case code:
			tok.WriteRune(r)
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		}
	}
	return fields
}

// compareFields reports the TOML keys of record a row leaves out, and the
// fields it names that record does not have.
func compareFields(t *testing.T, where string, record reflect.Type, documented map[string]bool, tag ...string) {
	t.Helper()
	keys := recordKeys(record, append(tag, "toml")[0])
	for _, k := range keys {
		if !documented[k] {
			t.Errorf("%s: the key %q (%s) is not documented", where, k, record)
		}
	}
	for f := range documented {
		if !slices.Contains(keys, f) {
			t.Errorf("%s documents %q, which %s does not have", where, f, record)
		}
	}
}

// recordKeys lists the top-level keys BurntSushi/toml (tag "toml") or
// encoding/json (tag "json") writes for a struct: tagged names, untagged field
// names, embedded structs' keys inline.
func recordKeys(typ reflect.Type, tag string) []string {
	var keys []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		switch {
		case name == "-":
		case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			keys = append(keys, recordKeys(f.Type, tag)...)
		case name == "":
			keys = append(keys, f.Name)
		default:
			keys = append(keys, name)
		}
	}
	return keys
}

// soleKey is the key of a row that documents one plain key.
func soleKey(first string) (string, bool) {
	toks := backquoted(first)
	if len(toks) != 1 || strings.ContainsAny(toks[0], "[ ") || first != "`"+toks[0]+"`" {
		return "", false
	}
	return toks[0], true
}

// checkDefault compares a default the table gives as a plain value (`30m`,
// `false`, 262144, —) with config.Keys' TOML one ("30m", false, 262144, "").
// A default in words (the adapter's, the harness) is not compared.
func checkDefault(t *testing.T, key, cell, want string) {
	t.Helper()
	got := strings.Trim(cell, "`")
	want = strings.Trim(want, `"`)
	if got == "—" {
		if want != "" && want != "[]" && want != "{}" && want != "0" && want != "0.0" {
			t.Errorf("docs/state.md: seat.toml %s has no default, config.Keys says %s", key, want)
		}
		return
	}
	if strings.ContainsAny(got, " ,(") || strings.Contains(cell, "— (") {
		return // in words
	}
	if got != want {
		t.Errorf("docs/state.md: seat.toml %s defaults to %q, config.Keys says %q", key, got, want)
	}
}
