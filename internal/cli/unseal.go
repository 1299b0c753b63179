package cli

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/keywrap/shamir"
)

// A sealGate is the server of -seal split until k custodians have
// unsealed it, and its unseal routes after: while sealed it answers
// /healthz (200), /readyz (503, saying sealed and how many shares it has),
// POST /operator/unseal and GET /operator/seal-status (operator key), and
// 503 with a problem to everything else. Shares are kept in memory only
// until k have come, then combined, checked against the description's key
// id, and cleared whatever the outcome; the combined key goes to open
// (the server opens the Vault with it, then clears it) and is forgotten.
// A restart seals again.
type sealGate struct {
	desc        splitDescription
	operatorSum [sha256.Size]byte
	log         *slog.Logger
	// open opens the Vault with key and starts serving it; it must not
	// keep key (the gate clears it when open returns).
	open func(key []byte) error
	// failures limits failed authentications per client address, as the
	// Vault does once open (-auth-failures-per-minute); nil: no limit.
	failures *ratelimit.Set
	// extra are more GET routes served while sealed (/metrics).
	extra map[string]http.Handler

	mu     sync.Mutex
	shares map[byte]shamir.Share // by x
	sealed bool
}

// newSealGate returns the gate of the split desc: operatorKey opens its
// routes, failuresPerMinute failed authentications from one address are
// answered 401 and further ones 429 (0: no limit), open opens the Vault.
func newSealGate(desc splitDescription, operatorKey string, failuresPerMinute int, log *slog.Logger, open func(key []byte) error) *sealGate {
	return &sealGate{desc: desc, operatorSum: sha256.Sum256([]byte(operatorKey)), log: log, open: open,
		failures: ratelimit.NewSet(float64(failuresPerMinute)/60, 60), shares: map[byte]shamir.Share{}, sealed: true}
}

// sealStatus is the answer of the unseal routes: never a share.
type sealStatus struct {
	Sealed bool   `json:"sealed"`
	Have   int    `json:"have"`
	Need   int    `json:"need"`
	N      int    `json:"n"`
	KeyID  string `json:"key_id"`
	Detail string `json:"detail,omitempty"`
}

func (g *sealGate) status() sealStatus {
	return sealStatus{Sealed: g.sealed, Have: len(g.shares), Need: g.desc.K, N: g.desc.N, KeyID: g.desc.KeyID}
}

// sealedMessage is the detail of every data call's 503 while sealed.
func (g *sealGate) sealedMessage() string {
	return fmt.Sprintf("the vault is sealed: %d of %d custodians must unseal it (POST /operator/unseal, or tokenvault operator unseal)", g.desc.K, g.desc.N)
}

// handler serves everything while sealed; routes is the unseal routes
// alone, for the mux of the unsealed server.
func (g *sealGate) handler() http.Handler {
	mux := http.NewServeMux()
	g.routes(mux)
	mux.HandleFunc("GET /healthz", healthz)
	for route, h := range g.extra {
		mux.Handle("GET "+route, h)
	}
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		st := g.status()
		g.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "sealed: %d of %d shares (k %d of n %d custodians must unseal it)\n", st.Have, st.Need, st.Need, st.N)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		writeGateProblem(w, http.StatusServiceUnavailable, g.sealedMessage())
	})
	return httpapi.NoStore(mux)
}

// routes mounts the unseal routes on mux.
func (g *sealGate) routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /operator/unseal", g.operator(g.unseal))
	mux.HandleFunc("GET /operator/seal-status", g.operator(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		st := g.status()
		g.mu.Unlock()
		writeGateJSON(w, http.StatusOK, st)
	}))
}

// operator guards a route with the operator key (SVC-API-KEY), compared
// as SHA-256 sums in constant time.
func (g *sealGate) operator(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256([]byte(r.Header.Get(httpapi.APIKeyHeader)))
		if subtle.ConstantTimeCompare(sum[:], g.operatorSum[:]) != 1 {
			addr, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				addr = r.RemoteAddr
			}
			if ok, wait := g.failures.Take(addr, time.Now()); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
				writeGateProblem(w, http.StatusTooManyRequests, "too many failed authentications from this address")
				return
			}
			g.log.Warn("unseal routes: a wrong operator key", "from", r.RemoteAddr, "route", r.URL.Path)
			writeGateProblem(w, http.StatusUnauthorized, "the operator key is missing or wrong")
			return
		}
		h(w, r)
	}
}

// maxShareBody bounds the body of POST /operator/unseal: a share's text is
// under 200 bytes.
const maxShareBody = 4096

// unseal takes one share: its text (what tokenvault operator unseal
// sends), or JSON {"share": "..."}, whose string Go cannot clear.
func (g *sealGate) unseal(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxShareBody+1))
	defer clear(body)
	if err != nil || len(body) > maxShareBody {
		writeGateProblem(w, http.StatusBadRequest, "the body must be one share, at most 4096 bytes")
		return
	}
	text := body
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		var in struct {
			Share string `json:"share"`
		}
		if json.Unmarshal(t, &in) != nil {
			writeGateProblem(w, http.StatusBadRequest, `the body must be a share's text or {"share": "..."}`)
			return
		}
		text = []byte(in.Share)
		defer clear(text)
	}
	s, keyID, err := parseShare(text)
	if err != nil {
		writeGateProblem(w, http.StatusBadRequest, err.Error())
		return
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.sealed {
		clear(s)
		writeGateProblem(w, http.StatusConflict, "the vault is already unsealed")
		return
	}
	if keyID != "" && keyID != g.desc.KeyID {
		clear(s)
		writeGateProblem(w, http.StatusBadRequest, fmt.Sprintf("this is a share of root key %s; this server's root key is %s (the share was not counted)", keyID, g.desc.KeyID))
		return
	}
	if prev, ok := g.shares[s.X()]; ok {
		same := subtle.ConstantTimeCompare(prev, s) == 1
		clear(s)
		if same { // the same share twice counts once
			writeGateJSON(w, http.StatusOK, g.status())
			return
		}
		x := int(prev.X())
		g.drop()
		g.log.Warn("unseal: two different shares of the same number were submitted; every gathered share was dropped", "from", r.RemoteAddr, "x", x)
		writeGateProblem(w, http.StatusBadRequest, "two different shares of the same number were submitted, so one is wrong: every gathered share was dropped; the custodians must submit theirs again")
		return
	}
	g.shares[s.X()] = s
	if len(g.shares) < g.desc.K {
		g.log.Info("unseal: a share was submitted", "from", r.RemoteAddr, "have", len(g.shares), "need", g.desc.K)
		writeGateJSON(w, http.StatusOK, g.status())
		return
	}
	all := make([]shamir.Share, 0, len(g.shares))
	for _, s := range g.shares {
		all = append(all, s)
	}
	key, err := shamir.Combine(all)
	g.drop()
	if err != nil || !g.desc.checks(key) {
		clear(key)
		g.log.Warn("unseal: the shares do not combine into the root key (its key id differs); every gathered share was dropped", "from", r.RemoteAddr, "key_id", g.desc.KeyID)
		writeGateProblem(w, http.StatusBadRequest, fmt.Sprintf("the %d shares do not combine into root key %s, so one of them is wrong: every gathered share was dropped; the custodians must submit theirs again", g.desc.K, g.desc.KeyID))
		return
	}
	err = g.open(key)
	clear(key)
	if err != nil {
		g.log.Error("unseal: the root key is right but the vault did not open; it stays sealed", "err", err)
		writeGateProblem(w, http.StatusInternalServerError, "the root key is right but the vault did not open (see the server's log); it stays sealed and every gathered share was dropped")
		return
	}
	g.sealed = false
	g.log.Info("unsealed: the root key was combined from its shares, checked, and the vault opened; the shares and the key were cleared", "key_id", g.desc.KeyID, "k", g.desc.K, "n", g.desc.N)
	writeGateJSON(w, http.StatusOK, g.status())
}

// drop clears and forgets every gathered share. g.mu is held.
func (g *sealGate) drop() {
	for x, s := range g.shares {
		clear(s)
		delete(g.shares, x)
	}
}

// withUnsealRoutes serves the unseal routes of g (which answer that the
// vault is unsealed) beside h, the unsealed server.
func (g *sealGate) withUnsealRoutes(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	g.routes(mux)
	mux.Handle("/", h)
	return httpapi.NoStore(mux)
}

func writeGateJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeGateProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(httpapi.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
}
