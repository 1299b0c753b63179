package main

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// The sizes of what a vault writes for a token, read from a vault's bbolt
// file after loading it with each loadgen mode: its record under
// tenant/<id>/token/, an audit line under tenant/<id>/log/, the line's
// entity index entry under tenant/<id>/idx/log-e/, its list entry (in the
// list of its shape, its type and containers, under idx/tl-s/) and, for a
// card, a CVC entry under sys/cvc/; the line's place in the audit chain
// (its link, a sealed record of its own under chain_link/ keyed like the
// line, and its sequence index entry under idx/chain-seq/); and in each
// transaction the count of the shape and the chain's head (the shape's
// registry entry, written once, is left out).
// The keys below have the vault's lengths too (86, 101, 101, 94 and 98
// bytes); the records are a little shorter than the vault's for loadgen's
// values (138 and 434 bytes), since a record holds its value and shorter
// values make shorter ones. TestWritesMatchTheVault holds the bound's
// bytes within a tenth below the vault's, so that it stays a bound and a
// close one.
const (
	recordSize     = 130 // a sealed record holding a short plain value
	cardRecordSize = 430 // a sealed card record: data, mask, expiry
	lineSize       = 82  // an audit line (the sizes vary by a few bytes)
	linkSize       = 110 // a sealed chain link: seq, prev hash, hash
	countSize      = 52  // a sealed count
	headSize       = 115 // a sealed chain head
	maxBody        = 8 << 20
)

// handler writes and reads the vault's bytes for one tenant.
type handler struct {
	st         *bolt.Store
	tenant     string // the tenant's id, in every key, as in a vault
	app        string // the created_by of every token
	record     []byte // random bytes, as sealed data is
	cardRecord []byte
	line       []byte
	// macs stand in for the keyed MACs of the list shapes of a plain
	// token (token in /general/high/) and of a card (card in /pci/high/).
	macs [2][]byte
	// seq numbers the audit lines, as a tenant's chain does.
	seq atomic.Uint64
}

// newHandler routes the bound's requests over st.
func newHandler(st *bolt.Store) http.Handler {
	h := &handler{st: st, tenant: newID(), app: newID(),
		record: random(recordSize), cardRecord: random(cardRecordSize), line: random(lineSize)}
	for i := range h.macs {
		h.macs[i] = random(16)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("POST /tokenize", h.tokenize)
	mux.HandleFunc("GET /tokens/{id}", h.getToken)
	return mux
}

// token is an answer the shape and size of a vault's token without data.
type token struct {
	ID                    string    `json:"id"`
	TenantID              string    `json:"tenant_id"`
	Type                  string    `json:"type"`
	Fingerprint           string    `json:"fingerprint"`
	FingerprintExpression string    `json:"fingerprint_expression"`
	Containers            []string  `json:"containers"`
	CreatedBy             string    `json:"created_by"`
	CreatedAt             time.Time `json:"created_at"`
}

// tokenize stores a token for each plain value of the body, or one for a
// token request, in one transaction.
func (h *handler) tokenize(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&body); err != nil || len(body) == 0 {
		http.Error(w, "the body must be a JSON object with at least one member", http.StatusBadRequest)
		return
	}
	_, request := body["data"]
	card := request && string(body["type"]) == `"card"`
	ids := make(map[string]string, len(body))
	if request {
		ids["id"] = newID()
	} else {
		for name := range body {
			ids[name] = newID()
		}
	}
	err := h.st.Update(r.Context(), func(tx store.Tx) error {
		for _, id := range ids {
			record := h.record
			if card {
				record = h.cardRecord
				if err := tx.Put(h.cvcKey(id), nil); err != nil {
					return err
				}
			}
			if err := tx.Put(h.tokenKey(id), record); err != nil {
				return err
			}
			for _, e := range append(h.auditEntries(id), h.listEntries(id, card)...) {
				if err := tx.Put(e.Key, e.Value); err != nil {
					return err
				}
			}
		}
		for _, k := range h.countKeys(card) {
			if err := tx.Put(k, random(countSize)); err != nil {
				return err
			}
		}
		return tx.Put(fmt.Appendf(nil, "tenant/%s/chain/head", h.tenant), random(headSize))
	})
	if err != nil {
		http.Error(w, "storing failed", http.StatusInternalServerError)
		return
	}
	if request {
		writeJSON(w, http.StatusCreated, h.token(ids["id"], string(body["type"])))
		return
	}
	writeJSON(w, http.StatusCreated, ids)
}

// getToken reads a token's record and makes its audit line durable.
func (h *handler) getToken(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var found bool
	err := h.st.View(r.Context(), func(tx store.Tx) error {
		v, err := tx.Get(h.tokenKey(id))
		found = v != nil
		return err
	})
	if err == nil && found {
		err = h.st.Append(r.Context(), h.auditEntries(id))
	}
	switch {
	case err != nil:
		http.Error(w, "reading failed", http.StatusInternalServerError)
	case !found:
		http.Error(w, "no such token", http.StatusNotFound)
	default:
		writeJSON(w, http.StatusOK, h.token(id, `"token"`))
	}
}

// auditEntries are an audit line about the token id, its index entry and
// its chain sequence index entry. (A vault appends a read's line unlinked
// and links it when it folds the append; the bound writes it linked at
// once: the same bytes in the end, for less work.)
func (h *handler) auditEntries(id string) []store.Entry {
	line := newID()
	suffix := fmt.Sprintf("%016x/%s", time.Now().UnixNano(), line)
	return []store.Entry{
		{Key: fmt.Appendf(nil, "tenant/%s/log/%s", h.tenant, suffix), Value: h.line},
		{Key: fmt.Appendf(nil, "tenant/%s/chain_link/%s", h.tenant, suffix), Value: random(linkSize)},
		// The line id's last 10 digits are random: unique enough per token.
		{Key: fmt.Appendf(nil, "tenant/%s/idx/log-e/%s/%s", h.tenant, id, line[len(line)-10:]), Value: []byte{}},
		{Key: fmt.Appendf(nil, "tenant/%s/idx/chain-seq/%016x/%s", h.tenant, h.seq.Add(1), suffix), Value: []byte{}},
	}
}

// listEntries are the list index entries of the token id: one, its
// position (8 bytes of time, a zero byte and the id's 16) in the list of
// its shape (16 bytes of keyed MAC: a fixed one stands in).
func (h *handler) listEntries(id string, card bool) []store.Entry {
	u := uuid.MustParse(id)
	pos := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))
	pos = append(append(pos, 0), u[:]...)
	mac := h.macs[0]
	if card {
		mac = h.macs[1]
	}
	entries := []store.Entry{{Key: fmt.Appendf(nil, "tenant/%s/idx/tl-s/%s%s", h.tenant, mac, pos), Value: []byte{}}}
	return entries
}

// countKeys are the counts a transaction of tokens changes: of their
// shape.
func (h *handler) countKeys(card bool) [][]byte {
	mac := h.macs[0]
	if card {
		mac = h.macs[1]
	}
	keys := [][]byte{fmt.Appendf(nil, "tenant/%s/count/tok-s/%x", h.tenant, mac)}
	return keys
}

func (h *handler) tokenKey(id string) []byte {
	return fmt.Appendf(nil, "tenant/%s/token/%s", h.tenant, id)
}

func (h *handler) cvcKey(id string) []byte {
	return fmt.Appendf(nil, "sys/cvc/%s/%s/%016x", h.tenant, id, time.Now().Add(time.Hour).UnixNano())
}

// token is the answer about the token id of the JSON string typ.
func (h *handler) token(id, typ string) token {
	var name string
	if json.Unmarshal([]byte(typ), &name) != nil || name == "" {
		name = "token"
	}
	return token{ID: id, TenantID: h.tenant, Type: name, Fingerprint: strings.Repeat("0", 64),
		FingerprintExpression: "{{ data | stringify }}", Containers: []string{"/general/high/"},
		CreatedBy: h.app, CreatedAt: time.Now().UTC()}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// newID is a time-ordered id, as the vault's.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
