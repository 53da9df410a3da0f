package launch

import (
	"fmt"
	"os"
	"path/filepath"
)

// HarnessBinary finds a real harness binary for tests and `pantty measure`:
// the file named by the environment variable env, else the native binary
// scripts/test.sh installs at rel under the harness cache
// (${PANTTY_HARNESS_CACHE:-$HOME/.cache/pantty-harness}; the npm package's
// platform dependency, so no Node.js wrapper sits between tmux and the
// harness). name is the harness binary's name for the error, which says where
// it looked.
func HarnessBinary(name, env string, rel ...string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s=%s is not an executable file", env, p)
		}
		return p, nil
	}
	cache := os.Getenv("PANTTY_HARNESS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no %s and no HOME to find the harness cache", env)
		}
		cache = filepath.Join(home, ".cache", "pantty-harness")
	}
	p := filepath.Join(append([]string{cache}, rel...)...)
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p, nil
	}
	return "", fmt.Errorf("no real %s binary: %s is unset and %s does not exist", name, env, p)
}
