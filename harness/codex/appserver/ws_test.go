package appserver

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// frame is a server frame (unmasked) as bytes.
func frame(fin bool, op byte, payload []byte) []byte {
	b := []byte{op, 0}
	if fin {
		b[0] |= 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b[1] = byte(n)
	case n <= 0xFFFF:
		b[1] = 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] = 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}

// readClient reads one masked client frame and unmasks it.
func readClient(t *testing.T, r io.Reader) (byte, []byte) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatal(err)
	}
	if h[1]&0x80 == 0 {
		t.Fatal("a client frame without a mask")
	}
	n := int(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		io.ReadFull(r, b[:])
		n = int(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		io.ReadFull(r, b[:])
		n = int(binary.BigEndian.Uint64(b[:]))
	}
	var mask [4]byte
	io.ReadFull(r, mask[:])
	p := make([]byte, n)
	io.ReadFull(r, p)
	for i := range p {
		p[i] ^= mask[i&3]
	}
	return h[0] & 0x0F, p
}

func pipe() (*wsConn, net.Conn) {
	c, s := net.Pipe()
	return &wsConn{c: c, br: bufio.NewReader(c)}, s
}

// TestFramesBothWays: a fragmented message with a ping between its frames
// arrives whole and the ping is answered with its payload; a client message
// of each length form goes out masked and unmasks to itself.
func TestFramesBothWays(t *testing.T) {
	w, s := pipe()
	defer s.Close()
	go func() {
		s.Write(frame(false, opText, []byte(`{"a":`)))
		s.Write(frame(true, opPing, []byte("hi")))
		s.Write(frame(true, opContinuation, []byte(`1}`)))
	}()
	got := make(chan []byte)
	go func() {
		m, err := w.ReadMessage()
		if err != nil {
			t.Error(err)
		}
		got <- m
	}()
	if op, p := readClient(t, s); op != opPong || string(p) != "hi" {
		t.Fatalf("answer to the ping: op %#x %q", op, p)
	}
	if m := <-got; string(m) != `{"a":1}` {
		t.Fatalf("message %q", m)
	}
	for _, n := range []int{5, 300, 70000} {
		msg := []byte(strings.Repeat("x", n))
		go w.WriteText(msg)
		if op, p := readClient(t, s); op != opText || string(p) != string(msg) {
			t.Fatalf("%d bytes: op %#x, %d bytes back", n, op, len(p))
		}
	}
}

// TestRefusesWhatAServerMayNotSend: a masked frame and reserved bits end
// the read with an error; a close frame is answered and reads as ErrClosed.
func TestRefusesWhatAServerMayNotSend(t *testing.T) {
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"masked", []byte{0x81, 0x81, 1, 2, 3, 4, 'x'}},
		{"reserved bit", []byte{0xC1, 0x01, 'x'}},
		{"unknown opcode", []byte{0x83, 0x00}},
	} {
		w, s := pipe()
		go s.Write(c.raw)
		if _, err := w.ReadMessage(); err == nil || errors.Is(err, ErrClosed) {
			t.Errorf("%s: %v", c.name, err)
		}
		s.Close()
	}
	w, s := pipe()
	defer s.Close()
	go s.Write(frame(true, opClose, []byte{0x03, 0xE8}))
	errc := make(chan error)
	go func() { _, err := w.ReadMessage(); errc <- err }()
	if op, p := readClient(t, s); op != opClose || string(p) != "\x03\xe8" {
		t.Fatalf("close answered with op %#x %q", op, p)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("after a close: %v", err)
	}
}
