package config

import (
	"strings"
	"time"
)

// Provider-wait bounds. A refusal whose reset time cannot be read is re-probed
// after DefaultProviderWait (the next submission is the probe); a parsed reset is
// never trusted beyond MaxProviderWait, because a misparse that yields a distant
// future would silence every seat on the provider, unannounced. seat.toml's
// [recovery] provider_reprobe and provider_max_wait override both per seat.
const (
	DefaultProviderWait = 60 * time.Second
	MaxProviderWait     = 6 * time.Hour
)

// providerGrammar is what names a provider or a ladder rung.
const providerGrammar = `[a-z0-9][a-z0-9._-]{0,62}`

// ValidProvider reports whether name may name a provider (a providers.toml table):
// whether it is the whole of providerGrammar.
func ValidProvider(name string) bool { return IsName(name, "._-") }

// IsName reports whether name is the whole of the grammar every pantty name
// follows, [a-z0-9][a-z0-9P]{0,62} where P is punct (seats and hosts take
// "_-", providers "._-"). It is a loop, not a regexp: every pantty process
// that names a seat or loads a seat.toml checks one, and compiling the
// {0,62} repetition cost more than the rest of a hook's or a `seat send`'s
// start (docs/performance-history.md, "Process start").
func IsName(name, punct string) bool {
	if len(name) < 1 || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && strings.IndexByte(punct, c) >= 0:
		default:
			return false
		}
	}
	return true
}
