package seat

// Progress is one line the driver reports to the `seat start` that spawned it,
// so start can show honest progress and exit with the driver's own verdict.
type Progress struct {
	State   string `json:"state"` // progress, ready, held (StateHeld), refused, error
	Text    string `json:"text,omitempty"`
	Holder  string `json:"holder,omitempty"`
	Session string `json:"session,omitempty"`
	Adopted bool   `json:"adopted,omitempty"`
}

// UnnamedTransition starts the driver.log line of a phase change that
// internal/machine's table does not name.
const UnnamedTransition = "machine: unnamed transition:"
