package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/statedir"
	"github.com/pantty/pantty/seat/state"
)

// VersionCachePath is $PANTTY_HOME/cache/harness-versions.toml: what each
// harness binary said when asked its version, keyed by its path and valid
// while the file's size and modification time are the ones recorded.
func VersionCachePath(home string) string {
	return filepath.Join(home, "cache", "harness-versions.toml")
}

// versionCache is harness-versions.toml.
type versionCache struct {
	Binary map[string]versionEntry `toml:"binary"`
}

type versionEntry struct {
	Size    int64     `toml:"size"`
	ModTime time.Time `toml:"mod_time"`
	Said    string    `toml:"said"`          // the first line of `BIN --version`
	Err     string    `toml:"err,omitempty"` // why it could not be asked
	AskedAt time.Time `toml:"asked_at"`
}

// versionAskLimit bounds one `BIN --version`: a binary that is not the
// harness (a wrapper script, a stand-in) must not hold a start or a sweep.
var versionAskLimit = 5 * time.Second

// InstalledVersion returns the first line the harness binary bin prints for
// --version ("2.1.328 (Claude Code)", "codex-cli 0.171.0"), asking it only
// when the binary changed since it was last asked (size or modification time
// differ from the cache): one stat per start otherwise. An upgrade in place
// changes both, so a start or a revival after an upgrade is judged by the new
// version. A binary that cannot say its version is remembered as such too,
// except one that did not answer in time (asked again next time).
func InstalledVersion(home, bin string) (string, error) {
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	cache := versionCacheFile(home)
	c, err := cache.Read()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c = versionCache{} // a damaged cache is asked again, never trusted
	}
	if e, ok := c.Binary[bin]; ok && e.Size == fi.Size() && e.ModTime.Equal(fi.ModTime()) {
		return e.Said, errOf(e.Err)
	}
	said, askErr := askVersion(bin)
	if errors.Is(askErr, errVersionLate) {
		// Not remembered: a binary slow to start under load (a Node
		// wrapper on a busy machine) would otherwise be "unknown version"
		// to every later start and sweep until it is reinstalled.
		return "", askErr
	}
	e := versionEntry{Size: fi.Size(), ModTime: fi.ModTime(), Said: said, AskedAt: time.Now().UTC()}
	if askErr != nil {
		e.Err = askErr.Error()
	}
	if c.Binary == nil {
		c.Binary = map[string]versionEntry{}
	}
	c.Binary[bin] = e
	if err := os.MkdirAll(filepath.Dir(cache.Path()), 0o700); err == nil {
		cache.Write(c) // a cache: a failed write only means asking again
	}
	return said, askErr
}

// errVersionLate marks a `--version` that missed versionAskLimit: a
// transient answer, never cached.
var errVersionLate = errors.New("no answer in time")

func askVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), versionAskLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	if len(line) > 200 {
		line = line[:200]
	}
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s --version did not answer within %s: %w", bin, versionAskLimit, errVersionLate)
	case err != nil:
		return "", fmt.Errorf("%s --version: %v", bin, err)
	case line == "":
		return "", fmt.Errorf("%s --version printed nothing", bin)
	}
	return line, nil
}

func errOf(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// versionCacheFile is cache/harness-versions.toml (temp files beside it: the
// cache directory is made on first write).
func versionCacheFile(home string) statedir.File[versionCache] {
	p := VersionCachePath(home)
	return statedir.Bind[versionCache](filepath.Dir(p), p, state.ReadRegular)
}
