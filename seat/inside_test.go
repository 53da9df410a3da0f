package seat

import (
	"path/filepath"
	"testing"
)

// TestPaneArgvIsRecognised: the pane process's command line is how a caller
// inside a seat is found, whatever --home it passes; the driver's argv and the
// parser must stay each other's inverse, and nothing else may parse as a pane.
func TestPaneArgvIsRecognised(t *testing.T) {
	home := t.TempDir()
	s, err := Open(home, "rev-1")
	if err != nil {
		t.Fatal(err)
	}
	w, ok := parsePaneArgv(PaneArgv("/usr/bin/pantty", s))
	if !ok || w.Name != "rev-1" || w.Home != home || w.By != "ancestry" || !w.Is(s) {
		t.Fatalf("PaneArgv(%s) parsed as %+v %v, want seat rev-1 in %s", s.Name, w, ok, home)
	}
	for _, argv := range [][]string{
		{"/usr/bin/pantty", "__drive", s.LaunchPath()},
		{"/usr/bin/pantty", "__exec"},
		{"/usr/bin/pantty", "__exec", "launch.toml"},
		{"/usr/bin/pantty", "__exec", filepath.Join(home, "other", "rev-1", "launch.toml")},
		{"/usr/bin/pantty", "__exec", filepath.Join(home, "seats", "Bad.Name", "launch.toml")},
		{"/usr/bin/pantty", "__exec", s.LaunchPath(), "extra"},
	} {
		if w, ok := parsePaneArgv(argv); ok {
			t.Errorf("%q parsed as a pane process of %+v", argv, w)
		}
	}
}
