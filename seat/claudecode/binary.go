package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// BinaryEnv names the real claude binary for tests and measurements.
const BinaryEnv = "PANTTY_CLAUDE_BIN"

// Version is the Claude Code version this adapter was measured against and the
// one scripts/test.sh installs.
const Version = "2.1.328"

// CachedBinary finds the real claude binary for tests and `pantty measure`:
// $PANTTY_CLAUDE_BIN, else the native binary scripts/test.sh installs under
// ${PANTTY_HARNESS_CACHE:-$HOME/.cache/pantty-harness}/claude (the npm package's
// platform dependency, so no Node.js wrapper sits between tmux and claude). The
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
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	p := filepath.Join(cache, "claude", "node_modules", "@anthropic-ai", "claude-code-"+runtime.GOOS+"-"+arch, "claude")
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p, nil
	}
	return "", fmt.Errorf("no real claude binary: %s is unset and %s does not exist", BinaryEnv, p)
}
