package sandbox

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The protocol between the Vault and a worker is a stream of frames on the
// worker's standard input (Vault to worker) and standard output (worker to
// Vault): a 4-byte big-endian length, a 1-byte type, then that many bytes of
// JSON. Each side handles one invocation at a time, so frames need no ids.
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
