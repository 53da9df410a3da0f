package seat

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pantty/pantty/seat/state"
)

// Remove deletes a seat no live driver holds: its directory under the state
// root with every record in it (inbox, events, handoffs, the harness's home
// when it is the seat's own). The workdir is the person's and is not touched.
// A live driver is refused (ErrOwned, the holder named): stop it first. A
// harness a dead driver left is stopped as `seat stop` does, and the directory
// is renamed away under the lock before it is deleted, so a concurrent start
// finds either the whole seat or no seat.
func Remove(s state.Seat) error {
	o, live, err := s.LiveOwner()
	if err != nil {
		return fmt.Errorf("%w: seat %q: owner record: %v", state.ErrUnobservable, s.Name, err)
	}
	if live {
		return fmt.Errorf("%w: seat %q is running, held by %s: stop it first ('pantty seat stop %s')", state.ErrOwned, s.Name, o, s.Name)
	}
	if err := Stop(s); err != nil {
		return err
	}
	lock, err := Acquire(s)
	if err != nil {
		return err
	}
	b := make([]byte, 4)
	rand.Read(b)
	gone := filepath.Join(s.Home, "seats", "."+s.Name+".removed-"+hex.EncodeToString(b))
	err = os.Rename(s.Dir, gone)
	lock.Release()
	if err != nil {
		return fmt.Errorf("seat %q: %v", s.Name, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return fmt.Errorf("seat %q is gone from the list, but %s could not be deleted: %v", s.Name, gone, err)
	}
	return nil
}
