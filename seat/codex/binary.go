package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// BinaryEnv names the real codex binary for tests and measurements.
const BinaryEnv = "PANTTY_CODEX_BIN"

// Version is the Codex CLI version this adapter was measured against and the
// one scripts/test.sh installs.
const Version = "0.171.0"

// CachedBinary finds the real codex binary for tests and `pantty measure`:
// $PANTTY_CODEX_BIN, else the native binary scripts/test.sh installs under
// ${PANTTY_HARNESS_CACHE:-$HOME/.cache/pantty-harness}/codex (the npm package's
// platform dependency, so no Node.js wrapper sits between tmux and codex). The
// error names where it looked.
func CachedBinary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s=%s is not an executable file", BinaryEnv, p)
		}
		return p, nil
	}
	cache := os.Getenv("PANTTY_HARNESS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no %s and no HOME to find the harness cache", BinaryEnv)
		}
		cache = filepath.Join(home, ".cache", "pantty-harness")
	}
	// The npm package's platform dependency and the Rust target inside it.
	arch := map[string][2]string{"amd64": {"x64", "x86_64-unknown-linux-musl"}, "arm64": {"arm64", "aarch64-unknown-linux-musl"}}[runtime.GOARCH]
	p := filepath.Join(cache, "codex", "node_modules", "@openai", "codex-"+runtime.GOOS+"-"+arch[0], "vendor", arch[1], "bin", "codex")
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p, nil
	}
	return "", fmt.Errorf("no real codex binary: %s is unset and %s does not exist", BinaryEnv, p)
}
