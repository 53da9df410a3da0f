package fleet

import (
	"fmt"
	"net/url"
	"strings"
)

// cursorPrefix marks a combined cursor: `fleet:` then host=CURSOR pairs in URL
// query form (sorted by host, each cursor escaped), e.g.
// `fleet:b=1765000000000000000%2Freviewer%2Fm1%2Fprocessed%2F0.0&local=…`.
// Each host's cursor is that host's own `events` cursor, so a resume is
// exactly as one host's is: per host, none missed, none repeated.
const cursorPrefix = "fleet:"

// Cursor is one events cursor per host: where each host's stream was left.
type Cursor map[string]string

// IsCombined reports whether s is a combined cursor (--since of `events
// --all-hosts`), not one host's cursor, time or duration.
func IsCombined(s string) bool { return strings.HasPrefix(s, cursorPrefix) }

// String is the cursor as printed on every merged event line.
func (c Cursor) String() string {
	v := url.Values{}
	for h, cur := range c {
		v.Set(h, cur)
	}
	return cursorPrefix + v.Encode()
}

// ParseCursor reads a combined cursor; a host it does not name starts from the
// oldest record, as a host's stream without --since does.
func ParseCursor(s string) (Cursor, error) {
	if !IsCombined(s) {
		return nil, fmt.Errorf("%q is not a fleet cursor (it starts with %q)", s, cursorPrefix)
	}
	v, err := url.ParseQuery(strings.TrimPrefix(s, cursorPrefix))
	if err != nil {
		return nil, fmt.Errorf("fleet cursor %q: %v", s, err)
	}
	c := Cursor{}
	for h, cs := range v {
		if len(cs) != 1 || cs[0] == "" {
			return nil, fmt.Errorf("fleet cursor %q: host %q must have one cursor", s, h)
		}
		c[h] = cs[0]
	}
	return c, nil
}
