package driver

import (
	"fmt"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
)

// unwritten is what the driver knows that its state files do not say yet,
// because a write failed: a full or read-only state root, a quota. The rule
// it serves is write-ahead (docs/reliability.md, "Storage faults"): no key
// reaches the pane unless the record saying what is about to happen is
// durable, and no close is reported (cursor, `send --wait`, events) unless
// its record is. While anything is unwritten the queue holds (the boundary's
// StateUnwritable), and the driver writes the pending records again on a
// short timer until they land, so the queue and every reader agree again
// without a restart.
//
// Before, a failed status write was only logged: the paste went out with
// "queued" still on disk and the close existed only in memory, so a driver
// started after the disk had room again delivered the same messages a second
// time (7 of 20 on a 4 MiB tmpfs filled mid-delivery, 2026-12-04).
type unwritten struct {
	err      error                   // the latest write that failed; nil when every record is durable
	since    time.Time               // when writes began to fail
	statuses map[string]*inbox.Entry // messages whose status in memory is newer than on disk
	replies  map[string]string       // whole replies not yet in inbox/replies/
	seen     map[string]bool         // consumed events still in events/ (their move to seen/ failed)
	failures int                     // writes that failed so far: a flush that added one did not end the fault
	retryT   timer
}

// stateRetry is how soon the driver writes its pending records again. No
// event says "the disk has room again" or "remounted read-write" (fsnotify
// reports changes to files, not to free space or mount flags), so this is a
// timer; a second keeps a freed disk's queue moving within about a second
// and costs one failed write a second while the fault lasts.
const stateRetry = time.Second

// faulty reports whether some record is not durable: the queue holds.
func (u *unwritten) faulty() bool { return u.err != nil }

// Cause is the hold as the heartbeat, status and recover name it.
func (u *unwritten) cause() string {
	if u.err == nil {
		return ""
	}
	return "state not writable: " + fsatomic.OneLine(u.err.Error())
}

// keep marks e's status as newer in memory than on disk.
func (u *unwritten) keep(e *inbox.Entry) {
	if u.statuses == nil {
		u.statuses = map[string]*inbox.Entry{}
	}
	u.statuses[e.Msg.ID] = e
}

// keepReply holds a reply whose file could not be written.
func (u *unwritten) keepReply(id, text string) {
	if u.replies == nil {
		u.replies = map[string]string{}
	}
	u.replies[id] = text
}

// markSeenLater remembers a consumed event whose move to seen/ failed, so
// it is not acted on twice while it still lies in events/.
func (u *unwritten) markSeenLater(name string) {
	if u.seen == nil {
		u.seen = map[string]bool{}
	}
	u.seen[name] = true
}

// stateFailed records that a write of what failed with err: the queue holds
// from now until flushState has written everything pending.
func (d *Driver) stateFailed(what string, err error) {
	u := &d.unwritten
	if u.err == nil {
		u.since = d.now()
		d.logf("%s: %v: holding the queue until the state is writable again", what, err)
	}
	u.failures++
	u.err = fmt.Errorf("%s: %w", what, err)
	if u.retryT.C() == nil {
		u.retryT.set(stateRetry)
	}
}

// writeStatus makes e's status durable, or keeps it pending and holds the
// queue. It reports whether the status on disk is now e's.
func (d *Driver) writeStatus(e *inbox.Entry) bool {
	u := &d.unwritten
	id := e.Msg.ID
	if _, ok := u.replies[id]; ok {
		// The status that makes a message final comes after its reply:
		// a reader that sees the state finds the whole reply beside it.
		u.keep(e)
		return false
	}
	if err := d.S.WriteStatus(e.Status); err != nil {
		u.keep(e)
		d.stateFailed("status of "+id, err)
		return false
	}
	delete(u.statuses, id)
	return true
}

// commitStatus applies change to e's status only if the result is durable:
// on a failed write e keeps the status it had (and whatever was pending for
// it stays pending). For the changes that must not happen unrecorded — a
// delivery's "submitting", a retry's re-queue.
func (d *Driver) commitStatus(e *inbox.Entry, change func(*inbox.Status)) bool {
	prev, pending := e.Status, d.unwritten.statuses[e.Msg.ID] != nil
	change(&e.Status)
	if d.writeStatus(e) {
		return true
	}
	e.Status = prev
	if !pending {
		delete(d.unwritten.statuses, e.Msg.ID)
	}
	return false
}

// flushState writes what is pending — replies, statuses in queue order,
// consumed events' moves, the heartbeat, then the cursor — and lifts the
// hold once all of it is durable. It runs on the retry timer.
func (d *Driver) flushState() {
	u := &d.unwritten
	u.retryT.stop()
	if u.err == nil {
		return
	}
	// The fault stays (and is logged once, not every second) until every
	// write below has worked; one that fails re-arms the timer.
	failures := u.failures
	for id, text := range u.replies {
		if err := d.writeReply(id, text); err != nil {
			d.stateFailed("reply of "+id, err)
			return
		}
		delete(u.replies, id)
	}
	for _, e := range d.order {
		if u.statuses[e.Msg.ID] != nil && !d.writeStatus(e) {
			return
		}
	}
	for name := range u.seen {
		if err := d.S.MarkSeen(name); err != nil {
			d.stateFailed("event "+name, err)
			return
		}
		delete(u.seen, name)
	}
	if !d.beat() {
		return
	}
	d.updateCursor()
	if u.failures != failures {
		return
	}
	u.err = nil
	d.logf("the state is writable again after %s: pending records written", d.now().Sub(u.since).Round(time.Millisecond))
	u.since = time.Time{}
	if d.phase == machine.Held {
		d.to(machine.StateWritten, "")
	}
}
