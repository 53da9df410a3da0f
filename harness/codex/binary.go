package codex

import (
	"runtime"

	"github.com/pantty/pantty/seat/launch"
)

// BinaryEnv names the real codex binary for tests and measurements.
const BinaryEnv = "PANTTY_CODEX_BIN"

// Version is the Codex CLI version this adapter was measured against and the
// one scripts/test.sh installs.
const Version = "0.171.0"

// CachedBinary finds the real codex binary for tests and `pantty measure`:
// $PANTTY_CODEX_BIN, else the native binary scripts/test.sh installs under
// the harness cache's codex/ (launch.HarnessBinary): the npm package's platform
// dependency and the Rust target inside it.
func CachedBinary() (string, error) {
	arch := map[string][2]string{"amd64": {"x64", "x86_64-unknown-linux-musl"}, "arm64": {"arm64", "aarch64-unknown-linux-musl"}}[runtime.GOARCH]
	return launch.HarnessBinary("codex", BinaryEnv, "codex", "node_modules", "@openai", "codex-"+runtime.GOOS+"-"+arch[0], "vendor", arch[1], "bin", "codex")
}
