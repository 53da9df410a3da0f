package seat

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
)

var commentedKey = regexp.MustCompile(`^# (\[\[?[a-z_]+\]\]?|[a-z_]+ = .*)$`)

// uncomment turns every commented-out key and table header of the template
// into a live line, except those of the tables named in skip.
func uncomment(text string, skip ...string) string {
	lines := strings.Split(text, "\n")
	table := ""
	for i, l := range lines {
		m := commentedKey.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(l, "[") {
				table = strings.Trim(l, "[]")
			}
			continue
		}
		if strings.HasPrefix(m[1], "[") {
			table = strings.Trim(m[1], "[]")
		}
		skipped := false
		for _, s := range skip {
			skipped = skipped || table == s
		}
		if !skipped {
			lines[i] = m[1]
		}
	}
	return strings.Join(lines, "\n")
}

// The template lists every key of Config, and what it shows is true: with
// every commented-out key uncommented, the file decodes strictly, validates,
// and yields exactly the configuration the defaults give (the ladder's lines
// are an example and add a rung, so they are checked for validity only).
func TestTemplateListsEveryKeyWithItsTrueDefault(t *testing.T) {
	t.Parallel()
	s, err := state.Open(t.TempDir(), "tpl")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := InitConfig(s, "claude-code", work, map[string]string{"FOO": "bar baz"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, key := range config.FieldKeys() {
		short := key[strings.LastIndex(key, ".")+1:]
		if !regexp.MustCompile(`(?m)^(# )?` + short + ` = `).MatchString(text) {
			t.Errorf("the template does not list %s", key)
		}
	}
	plain, err := s.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if plain.Env["FOO"] != "bar baz" || plain.Harness != "claude-code" || plain.Workdir != work {
		t.Fatalf("init's values: %+v", plain)
	}
	load := func(text string) (config.Config, error) {
		if err := os.WriteFile(s.ConfigPath(), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return s.LoadConfig()
	}
	full, err := load(uncomment(text, "ladder"))
	if err != nil {
		t.Fatalf("the template with its defaults uncommented: %v", err)
	}
	if got, want := fmt.Sprintf("%+v", full), fmt.Sprintf("%+v", plain); got != want {
		t.Fatalf("the defaults the template shows are not the ones applied:\nshown   %s\napplied %s", got, want)
	}
	if _, err := load(uncomment(text)); err != nil {
		t.Fatalf("the template's [[ladder]] example uncommented: %v", err)
	}
}

// A key appended at the end of seat.toml is refused with its line, never taken
// into a table where it means something else (the template used to end in
// [env], where an appended key silently became an environment variable).
func TestKeyAppendedToTheTemplateIsRefused(t *testing.T) {
	t.Parallel()
	s, err := state.Open(t.TempDir(), "tail")
	if err != nil {
		t.Fatal(err)
	}
	if err := InitConfig(s, "sim", t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.ConfigPath())
	for _, line := range []string{`turn_ceiling = "1m"`, `ANTHROPIC_API_KEY = "sk-x"`} {
		if err := os.WriteFile(s.ConfigPath(), append(append([]byte{}, data...), line+"\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := s.LoadConfig()
		if err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("appended %q: want an unknown-key error, got %v (env %v)", line, err, c.Env)
		}
	}
}
