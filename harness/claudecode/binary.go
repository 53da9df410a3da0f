package claudecode

import (
	"runtime"

	"github.com/pantty/pantty/seat/launch"
)

// BinaryEnv names the real claude binary for tests and measurements.
const BinaryEnv = "PANTTY_CLAUDE_BIN"

// Version is the Claude Code version this adapter was measured against and the
// one scripts/test.sh installs.
const Version = "2.1.328"

// CachedBinary finds the real claude binary for tests and `pantty measure`:
// $PANTTY_CLAUDE_BIN, else the native binary scripts/test.sh installs under
// the harness cache's claude/ (launch.HarnessBinary).
func CachedBinary() (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	return launch.HarnessBinary("claude", BinaryEnv, "claude", "node_modules", "@anthropic-ai", "claude-code-"+runtime.GOOS+"-"+arch, "claude")
}
