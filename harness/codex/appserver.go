package codex

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/statedir"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
)

// AppServerSocket is where a seat's app server listens: in the seat's
// harness directory, beside its CODEX_HOME. Codex makes the path a symlink
// to its socket under /tmp/codex-daemon-<uid>/ (measured on 0.171.0), so a
// long seat directory does not meet the socket path's length limit.
func AppServerSocket(s state.Seat) string {
	return filepath.Join(s.HarnessDir(), "app-server.sock")
}

// StartAppServer runs the seat's own app server for the app-server path
// (docs/codex.md, "The app-server path (experimental, measured on
// 0.171.0)"): the seat's CODEX_HOME prepared exactly as for a TUI launch
// (PrepareHome: config, pantty's hooks and their trust), the seat's launch
// environment, the seat's workdir, listening on AppServerSocket. It returns
// once the socket takes a connection; the server's exit is its Done, to be
// treated like a harness exit. A seat with transport = "app-server" runs on
// it: the driver starts it (Capabilities.AppServer).
func StartAppServer(ctx context.Context, l harness.Launch, stderr io.Writer) (*appserver.Server, error) {
	if err := PrepareHome(l.Seat, l.Config, l.Pantty, l.Authority); err != nil {
		return nil, err
	}
	home := Home(l.Seat, l.Config)
	vars, err := launch.HarnessEnv(os.Environ(), l.Seat, l.Config, map[string]string{"CODEX_HOME": home})
	if err != nil {
		return nil, err
	}
	// The drop directory, as the pane's launch gives it (Authority.WithDrop):
	// the model's `pantty handoff note` and `request` write there.
	vars = l.Authority.WithDrop(vars)
	spec := appserver.Spec{Bin: l.Binary(DefaultBinary), Home: home, Socket: AppServerSocket(l.Seat),
		Dir: l.Config.Workdir, Env: state.EnvList(vars), Args: appServerArgs(l.Config), Stderr: stderr}
	if l.Pantty != "" {
		// Under pantty's pane process, as a pane's harness runs: a child
		// subreaper whose pid session.toml records, so the model's commands
		// are recognised as inside the seat by ancestry, and what the
		// server starts in a session of its own is ended with it.
		if spec, err = UnderPaneProcess(spec, l.Pantty, l.Seat.ServerLaunchFile()); err != nil {
			return nil, err
		}
	}
	return appserver.Start(ctx, spec)
}

// UnderPaneProcess writes spec's server (its argv, environment and
// workdir) to the launch record and returns spec with Via set to pantty's
// pane process on that record (`pantty __exec RECORD`), so appserver.Start
// runs the server as that process's child: what the server starts in a
// session of its own (Codex's sandbox helpers, bwrap --new-session) is
// ended with it instead of outliving it.
func UnderPaneProcess(spec appserver.Spec, pantty string, record statedir.File[state.LaunchFile]) (appserver.Spec, error) {
	env := map[string]string{}
	for _, kv := range spec.ServerEnv() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v // a later entry wins, as exec's does
		}
	}
	if err := record.Write(state.LaunchFile{Argv: spec.Argv(), Dir: spec.Dir, Env: env}); err != nil {
		return spec, err
	}
	spec.Via = proc.PaneArgvAt(pantty, record.Path())
	return spec, nil
}

// appServerArgs carries seat.toml's model and permission mode to the app
// server as the TUI's --model and --sandbox carry them (modeArgs): as
// config overrides, `-c model=…` and `-c sandbox_mode=…` (the key --sandbox
// sets; 0.171.0 refuses an unknown mode at startup). seat.toml's args are
// TUI flags and are refused for this transport at load.
func appServerArgs(c config.Config) []string {
	var out []string
	if c.Model != "" {
		out = append(out, "-c", fmt.Sprintf("model=%q", c.Model))
	}
	if c.PermissionMode != "" {
		out = append(out, "-c", fmt.Sprintf("sandbox_mode=%q", c.PermissionMode))
	}
	return out
}
