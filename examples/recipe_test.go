package examples_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
)

// recipe returns the shell lines of sim.toml's install recipe, as a reader
// copies them (the comment lines indented by three spaces).
func recipe(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("sim.toml")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "#   ") {
			lines = append(lines, strings.TrimPrefix(l, "#   "))
		}
	}
	if len(lines) < 3 {
		t.Fatalf("sim.toml has no install recipe: %q", lines)
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestSimTomlRecipeRunsAsWritten runs sim.toml's install recipe as written,
// from the top of the checkout, with a state root under /tmp (as tests and many
// first tries have it): the seat starts, answers, and its directory and
// seat.toml are the person's only.
func TestSimTomlRecipeRunsAsWritten(t *testing.T) {
	h := seattest.New(t, "demo-sim") // a private tmux socket and clean-up; the recipe writes the seat itself
	// The recipe makes the seats/ directory too (the state root's only seat):
	// every directory it makes is the person's only.
	if err := os.RemoveAll(filepath.Dir(h.Seat().Dir)); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(h.Bin, filepath.Join(bin, "pantty")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-e", "-c", recipe(t))
	cmd.Dir = ".."
	cmd.Env = append(h.Env(), "PATH="+bin+":"+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the recipe failed: %v\nstdout: %s\nstderr: %s\ndriver.log:\n%s", err, stdout.String(), stderr.String(), h.DriverLog())
	}
	if !strings.Contains(stdout.String(), "sim: received") {
		t.Fatalf("the recipe's send got no reply:\n%s\n%s", stdout.String(), stderr.String())
	}
	for path, want := range map[string]os.FileMode{filepath.Dir(h.Seat().Dir): 0o700, h.Seat().Dir: 0o700, h.Seat().ConfigPath(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}
}
