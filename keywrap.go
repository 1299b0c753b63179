package tokenvault

import (
	"context"
	"errors"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/keyenvelope"
	"github.com/tokenvault/tokenvault/internal/seal"
)

// A KeyWrapper is the Vault's root of trust: it wraps (encrypts) the key
// material of the system keyring and of every tenant's keyring before the
// Vault stores it, and unwraps it when the Vault reads it. The Vault never
// reaches key material any other way.
//
// Implementations: [NewLocalKeyWrapper] (a 32-byte master key held by the
// process; Options.Keys.MasterKey is its shorthand), package keywrap/pkcs11 (an
// AES key that never leaves an HSM) and package keywrap/kms (any
// go-kms-wrapping wrapper: cloud KMSs, Vault or OpenBao transit).
//
// A KeyWrapper must be safe for concurrent use. Errors must never contain
// key material.
type KeyWrapper interface {
	// Kind names the kind of wrapper, such as "local" or "pkcs11": at most
	// 32 bytes, recorded in every envelope it wraps, so that Unwrap is
	// only asked to open what a wrapper of its kind wrapped.
	Kind() string
	// Wrap encrypts plaintext, authenticating aad (the store key the
	// result is written under) with it. It reports the key id and version
	// it used (each at most 255 bytes), which the Vault records in front
	// of the ciphertext.
	Wrap(ctx context.Context, plaintext, aad []byte) (WrappedKey, error)
	// Unwrap decrypts what Wrap returned, given the same aad. It fails
	// when w was wrapped under a key it does not hold.
	Unwrap(ctx context.Context, w WrappedKey, aad []byte) ([]byte, error)
}

// WrappedKey is key material wrapped by a KeyWrapper, as stored: the
// wrapper's kind, the id and version of the key that wrapped it, and the
// ciphertext.
type WrappedKey struct {
	Kind       string
	KeyID      string
	Version    string
	Ciphertext []byte
}

// The stored form of a wrapped keyring (the envelope) is
// internal/keyenvelope's: WrappedKey converts to and from its Envelope,
// which has the same fields (a field added to one and not the other does
// not compile).
const maxKindLen = keyenvelope.MaxKindLen

func marshalEnvelope(w WrappedKey) ([]byte, error) {
	return keyenvelope.Marshal(keyenvelope.Envelope(w))
}

// unmarshalEnvelope parses an envelope; legacy reports a keyring wrapped
// by a bare master key, whose bytes are then w.Ciphertext.
func unmarshalEnvelope(raw []byte) (w WrappedKey, legacy bool, err error) {
	e, legacy, err := keyenvelope.Unmarshal(raw)
	return WrappedKey(e), legacy, err
}

// localKind is the Kind of the local key wrapper.
const localKind = keyenvelope.LocalKind

// localWrapper wraps with master keys held in memory (seal.MasterKey): the
// current one wraps, previous ones only unwrap.
type localWrapper struct{ m *seal.MasterKey }

// NewLocalKeyWrapper returns the KeyWrapper of a master key held by the
// process: key (32 bytes) wraps, and key or any of previous unwraps.
// Errors never include key bytes. Its Kind is "local", its key id 8 hex
// digits derived from the key (never the key), its version "1".
//
// Returns a plain error, of no Kind (ErrorKind says Internal), when a key is
// not 32 bytes.
func NewLocalKeyWrapper(key []byte, previous ...[]byte) (KeyWrapper, error) {
	m, err := seal.NewMasterKey(key, previous...)
	if err != nil {
		return nil, err
	}
	return &localWrapper{m}, nil
}

func (l *localWrapper) Kind() string { return localKind }

func (l *localWrapper) Wrap(_ context.Context, plaintext, aad []byte) (WrappedKey, error) {
	return WrappedKey{Kind: localKind, KeyID: fmt.Sprintf("%08x", l.m.ID()), Version: "1", Ciphertext: l.m.Seal(aad, plaintext)}, nil
}

func (l *localWrapper) Unwrap(_ context.Context, w WrappedKey, aad []byte) ([]byte, error) {
	// The key id is also inside the ciphertext (seal's header), which is
	// what picks the key.
	return l.m.Open(aad, w.Ciphertext)
}

// String names the wrapper by its key id only.
func (l *localWrapper) String() string { return "local key wrapper " + l.m.String() }

// wrappers is the Vault's current key wrapper, which wraps, and the
// previous ones, which only unwrap. It is immutable.
type wrappers struct {
	current  KeyWrapper
	previous []KeyWrapper
}

// wrap wraps b (key material) for the store key storeKey.
func (ws *wrappers) wrap(ctx context.Context, storeKey string, b []byte) ([]byte, error) {
	w, err := ws.current.Wrap(ctx, b, []byte(storeKey))
	if err != nil {
		return nil, fmt.Errorf("tokenvault: %s key wrapper: wrap %s: %w", ws.current.Kind(), storeKey, err)
	}
	if w.Kind != ws.current.Kind() {
		return nil, fmt.Errorf("tokenvault: key wrapper %q wrapped as kind %q", ws.current.Kind(), w.Kind)
	}
	return marshalEnvelope(w)
}

// unwrap opens what wrap (or, for legacy keyrings, a bare master key)
// stored at storeKey, with the first wrapper of the envelope's kind that
// can.
func (ws *wrappers) unwrap(ctx context.Context, storeKey string, raw []byte) ([]byte, error) {
	w, _, err := unmarshalEnvelope(raw)
	if err != nil {
		return nil, err
	}
	var firstErr error
	tried := false
	for _, kw := range append([]KeyWrapper{ws.current}, ws.previous...) {
		if kw.Kind() != w.Kind {
			continue
		}
		tried = true
		b, err := kw.Unwrap(ctx, w, []byte(storeKey))
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if !tried {
		return nil, fmt.Errorf("tokenvault: %s is wrapped by a %s key wrapper (key %q, version %q), and none is configured", storeKey, w.Kind, w.KeyID, w.Version)
	}
	return nil, fmt.Errorf("tokenvault: %s key wrapper: unwrap %s (key %q, version %q): %w", w.Kind, storeKey, w.KeyID, w.Version, firstErr)
}

// then returns the wrappers that wrap with next and unwrap with next and
// every wrapper of ws.
func (ws *wrappers) then(next KeyWrapper) *wrappers {
	prev := append([]KeyWrapper{ws.current}, ws.previous...)
	return &wrappers{current: next, previous: prev}
}

// newWrappers builds the Vault's wrappers from its Options.
func newWrappers(opts Options) (*wrappers, error) {
	switch {
	case opts.Keys.Wrapper != nil && len(opts.Keys.MasterKey) > 0:
		return nil, errors.New("tokenvault: Options.Keys.Wrapper and Options.Keys.MasterKey exclude each other (MasterKey is the shorthand of a local key wrapper)")
	case opts.Keys.Wrapper != nil:
		ws := &wrappers{current: opts.Keys.Wrapper, previous: opts.Keys.PreviousWrappers}
		if len(opts.Keys.PreviousMasterKeys) > 0 {
			l, err := NewLocalKeyWrapper(opts.Keys.PreviousMasterKeys[0], opts.Keys.PreviousMasterKeys[1:]...)
			if err != nil {
				return nil, fmt.Errorf("tokenvault: previous master key: %w", err)
			}
			ws.previous = append(ws.previous, l)
		}
		return ws, nil
	}
	l, err := NewLocalKeyWrapper(opts.Keys.MasterKey, opts.Keys.PreviousMasterKeys...)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: master key: %w", err)
	}
	return &wrappers{current: l, previous: opts.Keys.PreviousWrappers}, nil
}

// WrappedKeyCount counts the keyrings of a store wrapped under one key of
// one wrapper. Legacy counts keyrings wrapped by a bare master key before
// key wrappers existed (their key id and version are empty); a rotation
// rewraps them.
type WrappedKeyCount struct {
	Kind    string `json:"kind"`
	KeyID   string `json:"key_id"`
	Version string `json:"version"`
	Legacy  bool   `json:"legacy,omitempty"`
	Count   int    `json:"count"`
}

// NeededKey returns which key a store needs, from an error of Open that
// is ErrWrongMasterKey: the kind of key wrapper, the key id and the
// version its system keyring was wrapped under (WrappedKey without the
// ciphertext). A local master key's id is LocalKeyID of the key. ok is
// false for any other error, and for a store whose keyring predates key
// wrappers (its key id is inside the ciphertext only).
//
// It lets a restore say which of the keys an operator kept a backup needs
// (rotating the master key leaves older backups under the older key).
func NeededKey(err error) (needs WrappedKey, ok bool) {
	var wk *wrongKeyError
	if !errors.As(err, &wk) || wk.needs.KeyID == "" {
		return WrappedKey{}, false
	}
	return wk.needs, true
}

// LocalKeyID is the key id of a local master key (32 bytes), as the local
// key wrapper records it: 8 hex digits derived from the key, which reveal
// nothing useful about it. Errors never include key bytes.
//
// Returns a plain error, of no Kind (ErrorKind says Internal), when key is
// not 32 bytes.
func LocalKeyID(key []byte) (string, error) {
	m, err := seal.NewMasterKey(key)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x", m.ID()), nil
}

// neededKey is the kind, key id and version of the envelope raw, or
// nothing when it cannot be read.
func neededKey(raw []byte) WrappedKey {
	w, legacy, err := unmarshalEnvelope(raw)
	if err != nil || legacy {
		return WrappedKey{}
	}
	return WrappedKey{Kind: w.Kind, KeyID: w.KeyID, Version: w.Version}
}
