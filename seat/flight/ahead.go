package flight

import (
	"errors"
	"fmt"
)

// Ahead is what Fill pastes: text whose record is durable. Only WriteAhead
// makes one, so no key reaches a harness through a door before the record
// saying what is about to be sent: a driver started after a crash then finds
// the text recorded as being submitted, and does not send it a second time
// (the write-ahead rule, docs/intake.md). The zero Ahead is refused.
type Ahead struct{ text string }

// ErrUnwritten is Fill's and WriteAhead's answer when the record of what is
// about to be sent is not durable: nothing was pasted.
var ErrUnwritten = errors.New("the record of what is about to be sent is not durable: nothing pasted")

// WriteAhead runs record, the caller's durable write of text about to be
// sent (a message's artifact and submitting status, a command's record),
// and answers the Ahead that Fill takes, or ErrUnwritten wrapping why.
func WriteAhead(text string, record func() error) (Ahead, error) {
	if err := record(); err != nil {
		return Ahead{}, fmt.Errorf("%w: %v", ErrUnwritten, err)
	}
	return Ahead{text: text}, nil
}

// Text is the recorded text: what Fill pastes.
func (a Ahead) Text() string { return a.text }
