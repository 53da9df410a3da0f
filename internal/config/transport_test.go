package config

import (
	"strings"
	"testing"
)

// seat.toml's transport: tmux when absent; app-server only for a resident
// codex seat without args (TUI flags); auto for every harness and shape (it
// is resolved at launch, and stays "auto" in the loaded config); anything
// else refused with one line naming the key.
func TestTransportIsValidatedAtLoad(t *testing.T) {
	t.Parallel()
	harnesses := []string{"sim", "codex"}
	for _, c := range []struct {
		harness, shape, transport string
		args                      []string
		want                      string // "" valid, else a piece of the error
		ladder                    bool
	}{
		{"codex", "", "", nil, "", false},
		{"sim", "", TransportTmux, nil, "", false},
		{"codex", ShapeResident, TransportAppServer, nil, "", false},
		{"codex", "", "pigeon", nil, "want tmux, app-server or auto", false},
		{"codex", "", TransportAuto, nil, "", false},
		{"sim", "", TransportAuto, nil, "", false},
		{"codex", ShapeStep, TransportAuto, nil, "", false},
		{"codex", "", TransportAuto, []string{"--oss"}, "", false},
		{"codex", "", TransportAuto, nil, "", true},
		{"sim", "", TransportAppServer, nil, "only the codex harness", false},
		{"codex", ShapeStep, TransportAppServer, nil, "only a resident seat", false},
		{"codex", "", TransportAppServer, []string{"--oss"}, "args are flags of the TUI", false},
		{"codex", "", TransportAppServer, nil, "a [[ladder]] is not supported", true},
	} {
		cfg := Config{Name: "s", Harness: c.harness, Workdir: t.TempDir(), Shape: c.shape, Transport: c.transport, Args: c.args}
		if c.ladder {
			cfg.Ladder = []Rung{{Name: "top"}, {Name: "low"}}
		}
		err := cfg.Validate("s", harnesses)
		applied := c.transport
		if applied == "" {
			applied = TransportTmux
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c, err)
		case c.want == "" && cfg.Transport != applied:
			t.Errorf("%+v: transport %q after validation", c, cfg.Transport)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "transport = ")):
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}
