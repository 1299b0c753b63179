package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The protocol between the Vault and a worker is a stream of frames on the
// worker's standard input (Vault to worker) and standard output (worker to
// Vault): a 4-byte big-endian length, a 1-byte type, then that many bytes:
// the message as JSON. The four frames that carry a value of the code's
// (frameRun: its req; frameCall: a host call's argument; frameReply: the
// host's answer; frameResult: what the code returned) hold, after the
// message, a newline and the value's own JSON as it is: the value is
// encoded once and decoded once, never JSON inside JSON. (encoding/json
// writes no newline in a message.) Each side handles one invocation at a
// time, so frames need no ids.
const frameHeader = 5

// Frame types.
const (
	// Vault to worker.
	frameInit    = 'I' // initLimits: apply the limits, then answer frameReady
	frameCompile = 'C' // compileRequest: answer frameCompiled
	frameRun     = 'X' // runRequest: answer with frameConsole/frameCall frames, then frameResult
	frameReply   = 'r' // callReply: the answer to the worker's last frameCall
	frameProbe   = 'P' // probeRequest (tests): try something the limits forbid, answer frameProbed

	// Worker to Vault.
	frameReady    = 'K' // readyMessage
	frameCompiled = 'c' // compiled
	frameConsole  = 'L' // consoleLine
	frameCall     = 'H' // hostCall: a client method or fetch, to be carried out by the Vault
	frameResult   = 'R' // runResult
	frameProbed   = 'p' // probeResult
)

// errFrameTooLarge is what readFrame returns for a frame over its limit: the
// peer is broken or hostile, and the stream cannot be resynchronized.
var errFrameTooLarge = errors.New("sandbox: frame too large")

// writeFrame encodes v as one frame of type typ and flushes it.
func writeFrame(w *bufio.Writer, typ byte, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sandbox: encoding frame %q: %w", typ, err)
	}
	var head [frameHeader]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(body)))
	head[4] = typ
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Flush()
}

// writeValueFrame is writeFrame for a frame that carries a value: the
// message v, a newline, then value, which is JSON already.
func writeValueFrame(w *bufio.Writer, typ byte, v any, value []byte) error {
	meta, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sandbox: encoding frame %q: %w", typ, err)
	}
	var head [frameHeader]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(meta)+1+len(value)))
	head[4] = typ
	for _, b := range [][]byte{head[:], meta, {'\n'}, value} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Flush()
}

// errNoValue is what splitValue returns for a frame without the newline
// that ends its message: the peer does not speak this protocol.
var errNoValue = errors.New("sandbox: a frame lacks its value")

// splitValue splits the body of a frame written by writeValueFrame into
// its message, decoded into v, and its value's JSON (empty: none).
func splitValue(body []byte, v any) (value []byte, err error) {
	meta, value, ok := bytes.Cut(body, []byte{'\n'})
	if !ok {
		return nil, errNoValue
	}
	if err := json.Unmarshal(meta, v); err != nil {
		return nil, err
	}
	return value, nil
}

// readFrame reads one frame of at most limit bytes of JSON.
func readFrame(r *bufio.Reader, limit int) (typ byte, body []byte, err error) {
	var head [frameHeader]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[:4])
	if int64(n) > int64(limit) {
		return 0, nil, errFrameTooLarge
	}
	body = make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return head[4], body, nil
}
