package appserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// Conn is one JSON-RPC 2.0 connection to a Codex app server: requests with
// ids (Call), notifications out (Notify) and in (Notifications), the
// server's own requests (approvals, tool calls) in the same stream with an
// ID to answer (Reply). Every message pantty sends carries "jsonrpc":"2.0".
type Conn struct {
	ws *wsConn

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan response
	err     error // why the connection ended; set once

	in   chan Message  // to the reader of Notifications
	done chan struct{} // closed when the connection ended
	quit chan struct{} // closed by Close: nothing more is delivered
	once sync.Once
}

// Message is one message the server sent that is not an answer to a Call:
// a notification (ID nil) or a request from the server (ID set: answer it
// with Reply, or the server waits).
type Message struct {
	ID     *json.RawMessage
	Method string
	Params json.RawMessage
}

// Error is a JSON-RPC error object the server answered a request with.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("appserver: error %d: %s", e.Code, e.Message)
}

// wire is any message on the wire, both ways.
type wire struct {
	JSONRPC string           `json:"jsonrpc,omitempty"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  any              `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *Error           `json:"error,omitempty"`
}

type response struct {
	result json.RawMessage
	err    error
}

// Dial connects to the app server listening on the Unix socket at path.
func Dial(ctx context.Context, path string) (*Conn, error) {
	ws, err := dialWS(ctx, path)
	if err != nil {
		return nil, err
	}
	c := &Conn{ws: ws, pending: map[int64]chan response{}, in: make(chan Message), done: make(chan struct{}), quit: make(chan struct{})}
	q := make(chan Message, 64)
	go c.read(q)
	go c.deliver(q)
	return c, nil
}

// read takes every message off the socket: answers go to their Call,
// everything else to the queue. It ends the connection on any read error.
func (c *Conn) read(q chan<- Message) {
	defer close(q)
	for {
		b, err := c.ws.ReadMessage()
		if err != nil {
			c.end(err)
			return
		}
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params json.RawMessage  `json:"params"`
			Result json.RawMessage  `json:"result"`
			Error  *Error           `json:"error"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			c.end(fmt.Errorf("appserver: a message that is not JSON: %v", err))
			return
		}
		if m.Method != "" {
			select {
			case q <- Message{ID: m.ID, Method: m.Method, Params: m.Params}:
			case <-c.done:
				return
			}
			continue
		}
		var id int64
		if m.ID == nil || json.Unmarshal(*m.ID, &id) != nil {
			continue // an answer to no request of ours
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		if m.Error != nil {
			ch <- response{err: m.Error}
		} else {
			ch <- response{result: m.Result}
		}
	}
}

// deliver hands the queued messages to Notifications in order, holding as
// many as the reader is behind (an unbounded queue: a slow reader never
// blocks the answers to Calls behind a burst of deltas).
func (c *Conn) deliver(q <-chan Message) {
	defer close(c.in)
	var held []Message
	for {
		var out chan Message
		var next Message
		if len(held) > 0 {
			out, next = c.in, held[0]
		}
		select {
		case m, ok := <-q:
			if !ok {
				for _, m := range held { // what came before the end still arrives
					select {
					case c.in <- m:
					case <-c.quit:
						return
					}
				}
				return
			}
			held = append(held, m)
		case out <- next:
			held = held[1:]
		case <-c.quit:
			return
		}
	}
}

// end records why the connection ended (the first reason only) and fails
// every Call still waiting.
func (c *Conn) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	for id, ch := range c.pending {
		ch <- response{err: fmt.Errorf("appserver: connection ended before the answer: %w", err)}
		delete(c.pending, id)
	}
	close(c.done)
}

// Notifications is every message from the server that is not an answer, in
// order; it is closed after the connection ended and what came before was
// delivered.
func (c *Conn) Notifications() <-chan Message { return c.in }

// Done is closed when the connection ended (Err says why): the server
// closed it or died, or Close was called.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended, nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Call sends a request and waits for its answer, decoded into result (nil:
// ignored). A JSON-RPC error answer is an *Error; the connection's end
// before the answer is an error wrapping why.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("appserver: %s: connection ended: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	raw := json.RawMessage(fmt.Sprint(id))
	if err := c.send(wire{ID: &raw, Method: method, Params: params}); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result != nil && len(r.result) > 0 {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("appserver: %s: answer: %v", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("appserver: %s: %w", method, ctx.Err())
	}
}

// Notify sends a notification (no answer).
func (c *Conn) Notify(method string, params any) error {
	return c.send(wire{Method: method, Params: params})
}

// Reply answers a request from the server (Message.ID) with result, or with
// a JSON-RPC error when rpcErr is not nil.
func (c *Conn) Reply(id *json.RawMessage, result any, rpcErr *Error) error {
	w := wire{ID: id, Error: rpcErr}
	if rpcErr == nil {
		b, err := json.Marshal(result)
		if err != nil {
			return err
		}
		w.Result = b
	}
	return c.send(w)
}

func (c *Conn) send(w wire) error {
	w.JSONRPC = "2.0"
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := c.ws.WriteText(b); err != nil {
		c.end(err)
		return fmt.Errorf("appserver: send %s: %w", w.Method, err)
	}
	return nil
}

// Close ends the connection; Err then wraps ErrClosed.
func (c *Conn) Close() error {
	c.once.Do(func() { close(c.quit) })
	c.end(ErrClosed)
	return c.ws.Close()
}
