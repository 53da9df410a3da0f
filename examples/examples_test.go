// Package examples_test keeps the example seat.toml files honest: every
// examples/*.toml is decoded with seat's strict decoder (an unknown key is an
// error with its line) and validated exactly as `pantty seat start` validates a
// seat's own seat.toml.
//
// Validation requires the workdir to exist, so every example uses workdir =
// "/tmp" (present on every Unix system and in CI); its comments tell the reader
// to point it at their project.
package examples_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/state"
)

func TestExamplesAreValidSeatConfigs(t *testing.T) {
	files, err := filepath.Glob("*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("want the example seat.toml files here, found %v", files)
	}
	known := knownKeys()
	// A socket name resolves under $TMUX_TMPDIR (creating tmux-UID there):
	// keep that inside the test's own directory.
	t.Setenv("TMUX_TMPDIR", t.TempDir())
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var c config.Config
			if err := fsatomic.DecodeStrict(file, data, &c); err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			// Install it as a seat's seat.toml and load it the way start does.
			s, err := state.Open(t.TempDir(), c.Name)
			if err != nil {
				t.Fatalf("name: %v", err)
			}
			if err := os.MkdirAll(s.Dir, fsatomic.DirMode); err != nil {
				t.Fatal(err)
			}
			// The examples' workdir is a placeholder the reader replaces; the
			// test's state root lives under the same /tmp, and a workdir that
			// holds the state root is refused (docs/intake.md), so the
			// placeholder becomes a directory of its own here.
			data = []byte(strings.Replace(string(data), `workdir = "/tmp"`, fmt.Sprintf("workdir = %q", t.TempDir()), 1))
			if err := os.WriteFile(s.ConfigPath(), data, fsatomic.FileMode); err != nil {
				t.Fatal(err)
			}
			if _, err := s.LoadConfig(); err != nil {
				t.Fatalf("%s does not validate: %v", file, err)
			}
			if _, err := state.SocketFor(c); err != nil {
				t.Fatalf("%s: tmux socket: %v", file, err)
			}
			// Options shown commented out must be real keys too: a reader who
			// uncomments one must not meet "unknown key".
			checkCommentedKeys(t, file, data, known)
		})
	}
}

// knownKeys lists the keys seat.toml accepts, by table ("" is the top level),
// from the toml tags of config.Config, so the list cannot drift from the decoder.
func knownKeys() map[string]map[string]bool {
	out := map[string]map[string]bool{"": {}}
	var walk func(table string, typ reflect.Type)
	walk = func(table string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			out[table][tag] = true
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(config.Duration{}) {
				out[tag] = map[string]bool{}
				walk(tag, f.Type)
			}
		}
	}
	walk("", reflect.TypeOf(config.Config{}))
	return out
}

var (
	tableLine     = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]`)
	commentedPair = regexp.MustCompile(`^#\s*([a-z][a-z_]*)\s*=\s*\S`)
)

func checkCommentedKeys(t *testing.T, file string, data []byte, known map[string]map[string]bool) {
	t.Helper()
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := tableLine.FindStringSubmatch(line); m != nil {
			table = m[1]
			continue
		}
		m := commentedPair.FindStringSubmatch(line)
		keys, ok := known[table]
		if m == nil || !ok { // [env] takes any variable name
			continue
		}
		if !keys[m[1]] {
			t.Errorf("%s:%d: commented-out option %q is not a seat.toml key", file, n, m[1])
		}
	}
}
