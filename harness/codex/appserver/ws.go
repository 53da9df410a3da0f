package appserver

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The WebSocket client here is the least RFC 6455 a Codex app server needs
// from its client, written out rather than taken from a library: the peer is
// a process pantty started itself, on a Unix socket only its user can open,
// speaking text frames of JSON. The client sends masked text frames (one
// frame per message), answers ping with pong and close with close, joins
// continuation frames, and refuses what a server may not send (a masked
// frame, a reserved bit, an unknown opcode, a message over maxMessage). It
// does not negotiate extensions (no permessage-deflate is offered, so none
// may come) or subprotocols. Go's standard library has no WebSocket; see the
// package doc for why this is not a dependency.

// Opcodes of RFC 6455, section 5.2.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// maxMessage bounds one message from the server: thread/resume answers with
// the thread's whole history, which grows with the thread; 256 MiB is far
// above a context window's worth of text.
const maxMessage = 256 << 20

// wsGUID is the constant of the opening handshake (RFC 6455, section 1.3).
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// ErrClosed is a connection closed by either side (the server's close frame,
// or Close): what follows is no more messages.
var ErrClosed = errors.New("appserver: websocket closed")

// wsConn is one client WebSocket connection.
type wsConn struct {
	c  net.Conn
	br *bufio.Reader

	wmu sync.Mutex // one writer at a time: a frame is written whole
}

// dialWS opens the WebSocket on the Unix socket at path (a symlink to the
// socket is followed, as Codex makes one). The handshake is bounded by ctx.
func dialWS(ctx context.Context, path string) (*wsConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var raw [16]byte
	rand.Read(raw[:])
	key := base64.StdEncoding.EncodeToString(raw[:])
	req := "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, fmt.Errorf("appserver: handshake: %w", err)
	}
	br := bufio.NewReaderSize(c, 64<<10)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("appserver: handshake: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols ||
		!strings.EqualFold(res.Header.Get("Upgrade"), "websocket") ||
		res.Header.Get("Sec-WebSocket-Accept") != acceptKey(key) {
		c.Close()
		return nil, fmt.Errorf("appserver: handshake refused: %s", res.Status)
	}
	if ext := res.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		c.Close()
		return nil, fmt.Errorf("appserver: handshake: extension %q was not offered", ext)
	}
	if stop() {
		c.SetDeadline(time.Time{})
	}
	return &wsConn{c: c, br: br}, nil
}

// acceptKey is the Sec-WebSocket-Accept the server must answer key with.
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// writeFrame writes one whole, masked frame (clients must mask).
func (w *wsConn) writeFrame(op byte, payload []byte) error {
	hdr := make([]byte, 2, 14)
	hdr[0] = 0x80 | op
	switch n := len(payload); {
	case n < 126:
		hdr[1] = 0x80 | byte(n)
	case n <= 0xFFFF:
		hdr[1] = 0x80 | 126
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr[1] = 0x80 | 127
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	hdr = append(hdr, mask[:]...)
	buf := make([]byte, 0, len(hdr)+len(payload))
	buf = append(buf, hdr...)
	for i, b := range payload {
		buf = append(buf, b^mask[i&3])
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_, err := w.c.Write(buf)
	return err
}

// WriteText sends one text message.
func (w *wsConn) WriteText(msg []byte) error { return w.writeFrame(opText, msg) }

// ReadMessage returns the next data message, answering control frames on the
// way. A close frame from the server is answered and returns ErrClosed.
func (w *wsConn) ReadMessage() ([]byte, error) {
	var msg []byte
	started := false
	for {
		fin, op, payload, err := w.readFrame()
		if err != nil {
			return nil, err
		}
		switch op {
		case opPing:
			if err := w.writeFrame(opPong, payload); err != nil {
				return nil, err
			}
			continue
		case opPong:
			continue
		case opClose:
			w.writeFrame(opClose, closePayload(payload))
			return nil, ErrClosed
		case opText, opBinary:
			if started {
				return nil, errors.New("appserver: websocket: a new message inside a fragmented one")
			}
			started, msg = true, payload
		case opContinuation:
			if !started {
				return nil, errors.New("appserver: websocket: a continuation with no message")
			}
			if len(msg)+len(payload) > maxMessage {
				return nil, fmt.Errorf("appserver: websocket: a message over %d bytes", maxMessage)
			}
			msg = append(msg, payload...)
		default:
			return nil, fmt.Errorf("appserver: websocket: unknown opcode %#x", op)
		}
		if fin {
			return msg, nil
		}
	}
}

// closePayload is the status a close is answered with: the server's own
// status code echoed (RFC 6455, 5.5.1), nothing else.
func closePayload(p []byte) []byte {
	if len(p) >= 2 {
		return p[:2]
	}
	return nil
}

// readFrame reads one frame from the server.
func (w *wsConn) readFrame() (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(w.br, h[:]); err != nil {
		return
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0F
	if h[0]&0x70 != 0 {
		return false, 0, nil, errors.New("appserver: websocket: reserved bits set (no extension was negotiated)")
	}
	if h[1]&0x80 != 0 {
		return false, 0, nil, errors.New("appserver: websocket: a masked frame from the server")
	}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(w.br, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(w.br, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if op >= opClose && (n > 125 || !fin) {
		return false, 0, nil, errors.New("appserver: websocket: a control frame over 125 bytes or fragmented")
	}
	if n > maxMessage {
		return false, 0, nil, fmt.Errorf("appserver: websocket: a frame of %d bytes (limit %d)", n, maxMessage)
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(w.br, payload)
	return
}

// Close sends a normal close (1000) and closes the socket without waiting
// for the server's answer: the connection is pantty's to end, and the
// reader sees the socket closed.
func (w *wsConn) Close() error {
	w.c.SetWriteDeadline(time.Now().Add(time.Second))
	w.writeFrame(opClose, []byte{0x03, 0xE8})
	return w.c.Close()
}
