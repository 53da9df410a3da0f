package seat

import (
	"regexp"
	"strconv"
	"time"
)

// Provider-wait bounds: an unparseable refusal is retried after
// DefaultProviderWait; a parsed reset is never trusted beyond MaxProviderWait.
const (
	DefaultProviderWait = 60 * time.Second
	MaxProviderWait     = 6 * time.Hour
)

var relResetRE = regexp.MustCompile(`(?i)\bin\s+((?:\d+\s*[hms]\s*)+)`)
var relPartRE = regexp.MustCompile(`(\d+)\s*([hms])`)

// ProviderWait reads how long to wait from a refusal text, opportunistically:
// a relative "in 2h 5m" form is understood here (the recovery issue adds the
// other forms); anything else waits DefaultProviderWait. Always capped.
func ProviderWait(text string, now time.Time) time.Duration {
	m := relResetRE.FindStringSubmatch(text)
	if m == nil {
		return DefaultProviderWait
	}
	var d time.Duration
	for _, p := range relPartRE.FindAllStringSubmatch(m[1], -1) {
		n, _ := strconv.Atoi(p[1])
		switch p[2] {
		case "h", "H":
			d += time.Duration(n) * time.Hour
		case "m", "M":
			d += time.Duration(n) * time.Minute
		default:
			d += time.Duration(n) * time.Second
		}
	}
	if d <= 0 {
		return DefaultProviderWait
	}
	if d > MaxProviderWait {
		return MaxProviderWait
	}
	return d
}
