package seat_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// env_file in systemd's EnvironmentFile syntax, read from real files: what
// parses, and every way a file fails with one line naming the file and the
// line, never a silently dropped key.
func TestEnvFileSyntax(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := "# the seat's key\n; also a comment\n\nANTHROPIC_API_KEY=sk-test-1\n" +
		"QUOTED=\"a \\\"b\\\" \\\\ c\\n\"\nSINGLE='$not expanded'\n" +
		"JOINED=first\\\nsecond\nEVEN=ends-in-one-backslash\\\\\nAFTER=x\nODD=three\\\\\\\nmore\n"
	got, err := launch.ReadEnvFile(write(t, dir, "good.env", good, 0o600), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ANTHROPIC_API_KEY": "sk-test-1", "QUOTED": "a \"b\" \\ c\n", "SINGLE": "$not expanded",
		"JOINED": "firstsecond", "EVEN": `ends-in-one-backslash\\`, "AFTER": "x", "ODD": `three\\more`}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d variables %v, want %d", len(got), got, len(want))
	}

	bad := map[string]struct{ text, says string }{
		"trailing backslash at EOF": {"A=1\nKEY=lost\\", "line 2: a trailing backslash continues past the end"},
		"NUL":                       {"A=1\x00\n", "NUL byte"},
		"not an assignment":         {"A=1\njust words\n", "line 2: want KEY=VALUE"},
		"loader variable":           {"LD_PRELOAD=/tmp/x.so\n", "LD_PRELOAD changes what the harness runs"},
		"node options":              {"A=1\nNODE_OPTIONS=--require /tmp/x.js\n", "line 2: NODE_OPTIONS"},
		"reserved":                  {"PANTTY_SEAT=other\n", "reserved"},
		"unterminated quote":        {"A=\"open\n", "unterminated quote"},
	}
	for name, c := range bad {
		_, err := launch.ReadEnvFile(write(t, dir, strings.ReplaceAll(name, " ", "-"), c.text, 0o600), "")
		if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want one line saying %q, got %v", name, c.says, err)
		}
	}
}

// Who may have written an env_file decides whether it is read: a symlink
// (agenix, sops-nix) is followed to a private file; a file others can write,
// or one inside the workdir the model writes (directly or behind a link), is
// refused.
func TestEnvFileMustBeTheOwnersAlone(t *testing.T) {
	t.Parallel()
	dir, work := t.TempDir(), t.TempDir()
	secret := write(t, dir, "secret.env", "ANTHROPIC_API_KEY=sk-linked\n", 0o600)
	link := filepath.Join(dir, "link.env")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if got, err := launch.ReadEnvFile(link, work); err != nil || got["ANTHROPIC_API_KEY"] != "sk-linked" {
		t.Fatalf("a symlinked private env_file: %v %v", got, err)
	}
	shared := write(t, dir, "shared.env", "A=1\n", 0o600)
	if err := os.Chmod(shared, 0o620); err != nil { // chmod: the umask would mask a create mode
		t.Fatal(err)
	}
	if _, err := launch.ReadEnvFile(shared, work); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("a group-writable env_file: %v", err)
	}
	inside := write(t, work, "keys.env", "A=1\n", 0o600)
	if _, err := launch.ReadEnvFile(inside, work); err == nil || !strings.Contains(err.Error(), "inside the seat's workdir") {
		t.Fatalf("an env_file in the workdir: %v", err)
	}
	viaLink := filepath.Join(dir, "via.env")
	if err := os.Symlink(inside, viaLink); err != nil {
		t.Fatal(err)
	}
	if _, err := launch.ReadEnvFile(viaLink, work); err == nil || !strings.Contains(err.Error(), "inside the seat's workdir") {
		t.Fatalf("a link to an env_file in the workdir: %v", err)
	}
}

// On a running seat: env_file's values reach the harness, an adapter's own
// variable is not overridden by it, and the file (and what its link reaches)
// is among the paths the harness's read tools are denied (authority.toml).
func TestEnvFileReachesTheHarnessAndIsProtected(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := write(t, dir, "secret.env", "SEAT_TOKEN=tok-42\nDISABLE_AUTOUPDATER=0\n", 0o600)
	link := filepath.Join(dir, "seat.env")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	h := seattest.New(t, "envf", seattest.TOML(`env_file = "`+link+`"`))
	s := h.Seat()
	c, err := s.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	env, err := launch.HarnessEnv(nil, s, c, map[string]string{"DISABLE_AUTOUPDATER": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if env["SEAT_TOKEN"] != "tok-42" || env["DISABLE_AUTOUPDATER"] != "1" {
		t.Fatalf("harness env: SEAT_TOKEN=%q DISABLE_AUTOUPDATER=%q; want the file's token and the adapter's 1", env["SEAT_TOKEN"], env["DISABLE_AUTOUPDATER"])
	}
	h.Start()
	var a state.Authority
	h.WaitFor("authority.toml", 30*time.Second, func() bool {
		a, err = s.AuthorityFile().Read()
		return err == nil
	})
	for _, p := range []string{link, secret} {
		if !slices.Contains(a.Protected, p) {
			t.Fatalf("protected %v lacks %s", a.Protected, p)
		}
	}
}

func write(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	return p
}
