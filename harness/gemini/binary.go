package gemini

import "github.com/pantty/pantty/seat/launch"

// BinaryEnv names the real gemini binary for tests and measurements.
const BinaryEnv = "PANTTY_GEMINI_BIN"

// Version is the Gemini CLI version this adapter was measured against and the
// one scripts/test.sh installs.
const Version = "0.61.0"

// CachedBinary finds the real gemini command for tests and `pantty measure`:
// $PANTTY_GEMINI_BIN, else the npm package's bin link scripts/test.sh
// installs under the harness cache's gemini/ (launch.HarnessBinary).
func CachedBinary() (string, error) {
	return launch.HarnessBinary("gemini", BinaryEnv, "gemini", "node_modules", ".bin", "gemini")
}
