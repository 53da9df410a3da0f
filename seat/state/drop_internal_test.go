package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/tmux/tmuxtest"
)

// A drop request is read without following links, within its bound, and only
// with a known kind and a valid note: whatever the sandboxed shell plants in
// the drop directory cannot make the driver read another file or take junk.
func TestDropRequestIsCheckedBeforeUse(t *testing.T) {
	t.Parallel()
	dir := tmuxtest.Dir(t)
	secret := filepath.Join(dir, "secret.toml")
	os.WriteFile(secret, []byte("kind = \"note\"\ntext = \"from another file\"\n"), 0o600)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := filepath.Join(dir, "link.req")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		link: "symbolic link",
		write("big.req", "kind = \"note\"\ntext = \""+strings.Repeat("a", maxDropBytes)+"\"\n"): "over the 69632-byte maximum",
		write("kind.req", "kind = \"stop\"\n"):                                                  "kind",
		write("key.req", "kind = \"note\"\ntext = \"x\"\nseat = \"other\"\n"):                   "unknown key",
		write("garbage.req", "\x00\x01 not toml"):                                               "",
		write("ctl.req", "kind = \"note\"\ntext = \"\x1b[2J\"\n"):                               "",
	}
	for path, want := range bad {
		if _, err := ReadDrop(path); err == nil || !strings.Contains(err.Error(), want) && want != "symbolic link" {
			t.Errorf("%s: %v, want a refusal containing %q", filepath.Base(path), err, want)
		}
	}
	ok := write("ok.req", "kind = \"note\"\ntext = \"a procedure note\"\n")
	if r, err := ReadDrop(ok); err != nil || r.Kind != DropNote || r.Text != "a procedure note" {
		t.Fatalf("a good note: %+v, %v", r, err)
	}
	names, err := PendingDrops(dir)
	if err != nil || len(names) != 7 {
		t.Fatalf("pending %v (%v): want the 7 .req files, not the others", names, err)
	}
}
