package hookwire_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// The settings carry the seat's authority: read/edit/write denies for every
// protected path whatever the isolation, the session socket refused, and the
// sandbox block (required, no unsandboxed fallback, the drop directory the one
// write grant) only when isolation is on.
func TestClaudeSettingsCarryTheAuthority(t *testing.T) {
	t.Parallel()
	s := state.Seat{Name: "a", Home: "/st/pantty"}
	type settings struct {
		Permissions struct{ Deny []string }
		Cross       string `json:"crossSessionInbound"`
		Sandbox     *struct {
			Enabled, FailIfUnavailable bool
			AllowUnsandboxedCommands   *bool
			Filesystem                 struct{ AllowWrite, DenyWrite, DenyRead []string }
			Credentials                struct{ EnvVars []struct{ Name, Mode string } }
		}
	}
	read := func(a state.Authority) settings {
		b, err := hookwire.ClaudeSettings("/bin/pantty", s, false, a)
		if err != nil {
			t.Fatal(err)
		}
		var out settings
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	prot := []string{"/st/pantty", "/h/.claude/.credentials.json"}
	off := read(state.Authority{Isolation: config.IsolationUnavailable, Protected: prot})
	for _, rule := range []string{"Read(//st/pantty/**)", "Edit(//st/pantty/**)", "Read(//h/.claude/.credentials.json)", "Edit(//h/.claude/.credentials.json)"} {
		if !slices.Contains(off.Permissions.Deny, rule) {
			t.Errorf("deny rules %v lack %s", off.Permissions.Deny, rule)
		}
	}
	for _, rule := range off.Permissions.Deny {
		if strings.HasPrefix(rule, "Write(") {
			t.Errorf("deny rule %s: Claude Code matches no Write(…) rule and warns about it on the first screen (Edit covers writes)", rule)
		}
	}
	if off.Cross != "refuse" || off.Sandbox != nil {
		t.Errorf("isolation unavailable: crossSessionInbound %q, sandbox %+v", off.Cross, off.Sandbox)
	}
	on := read(state.Authority{Isolation: config.IsolationOn, Protected: prot, Drop: "/st/.pantty-drop/a"})
	sb := on.Sandbox
	if sb == nil || !sb.Enabled || !sb.FailIfUnavailable || sb.AllowUnsandboxedCommands == nil || *sb.AllowUnsandboxedCommands ||
		!slices.Equal(sb.Filesystem.AllowWrite, []string{"/st/.pantty-drop/a"}) || !slices.Equal(sb.Filesystem.DenyWrite, prot) ||
		!slices.Equal(sb.Filesystem.DenyRead, prot) {
		t.Fatalf("isolation on: sandbox %+v", sb)
	}
	if len(sb.Credentials.EnvVars) == 0 || sb.Credentials.EnvVars[0].Name != "ANTHROPIC_API_KEY" || sb.Credentials.EnvVars[0].Mode != "deny" {
		t.Fatalf("the API key variable is not denied to sandboxed commands: %+v", sb.Credentials)
	}
}
