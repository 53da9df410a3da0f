package config

import (
	"regexp"
	"sync"
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

var providerNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`) })

// ValidProvider reports whether name may name a provider (a providers.toml table).
func ValidProvider(name string) bool { return providerNameRE().MatchString(name) }
