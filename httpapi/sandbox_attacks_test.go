package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestAnonymousProxyCannotHurtTheServer: the attacks that once ended the
// whole server, sent anonymously through a proxy with require_auth false
// whose request transform runs them. Each gets a proxy_error within its
// deadline; the server answers /health throughout, and a second tenant's
// reactor calls over HTTP succeed meanwhile.
func TestAnonymousProxyCannotHurtTheServer(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) {
		o.Code.Timeout = 2 * time.Second
		o.Code.MemoryBytes = 64 << 20
		o.Code.Workers = 6
		o.Code.ConcurrencyPerTenant = 3
	})
	// The neighbour: a second tenant with a trivial reactor.
	boot, err := s.v.CreateTenant(t.Context(), tokenvault.CreateTenantRequest{Name: "Neighbour"})
	if err != nil {
		t.Fatal(err)
	}
	r := s.do(t, "POST", "/reactors", string(boot.Application.Key), map[string]any{"name": "echo", "code": `module.exports = async req => ({raw: req.args})`})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	var reactor struct{ ID string }
	r.json(t, &reactor)
	_, user := s.appIn(t, string(boot.Application.Key), map[string]any{"name": "u", "type": "private", "permissions": []string{"token:use"}})

	attacks := map[string]string{
		"cyclic flat":      `const a = [1]; a.push(a); a.flat(Infinity)`,
		"cyclic join":      `const a = [1]; a.push(a); a.join(",")`,
		"huge walk":        `Array.prototype.lastIndexOf.call({length: 2**53 - 1}, 1)`,
		"concat.apply":     `String.prototype.concat.apply("", Array(1500).fill("x".repeat(1 << 20)))`,
		"shared tree":      `let t = {}; for (let i = 0; i < 40; i++) t = {a: t, b: t}; JSON.stringify(t)`,
		"big typed array":  `new Uint8Array(2**30).fill(1)`,
		"Array.from":       `Array.from({length: 2**31})`,
		"huge split":       `"x".repeat(60 << 20).split("")`,
		"infinite loop":    `while (true) {}`,
		"never settles":    `await new Promise(() => {})`,
		"deep recursion":   `const f = n => f(n + 1) + 1; f(0)`,
		"fetch loopback":   `await fetch("http://127.0.0.1:1/")`,
		"fetch metadata":   `await fetch("http://169.254.169.254/latest/meta-data/")`,
		"fetch flood":      `for (let i = 0; i < 100; i++) await fetch("http://192.0.2.1/").catch(() => {})`,
		"require fs":       `require("fs").readFileSync("/etc/passwd")`,
		"process env":      `process.env.TOKENVAULT_MASTER_KEY`,
		"prototype attack": `Object.prototype.toString = null; ({}).toString()`,
	}
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer dest.Close()
	for name, attack := range attacks {
		t.Run(name, func(t *testing.T) {
			r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{
				"name": "attack", "destination_url": dest.URL, "require_auth": false,
				"request_transform": map[string]any{"code": "module.exports = async (req) => { " + attack + "; return req.args }"},
			})
			wantStatus(t, "POST /proxies", r, http.StatusCreated)
			var p struct{ Key string }
			r.json(t, &p)

			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if h, err := http.Get(s.srv.URL + "/health"); err != nil || h.StatusCode != http.StatusOK {
						t.Errorf("/health = %v, %v during the attack", h, err)
						return
					} else {
						h.Body.Close()
					}
					r := s.do(t, "POST", "/reactors/"+reactor.ID+"/react", user, map[string]any{"args": map[string]any{"i": i}})
					if r.status != http.StatusOK {
						t.Errorf("the neighbour's call = %d %s during the attack", r.status, r.body)
						return
					}
				}
			})
			start := time.Now()
			r = s.do(t, "POST", "/proxy", "", `{"card": "4242424242424242"}`, "SVC-PROXY-KEY", p.Key)
			took := time.Since(start)
			close(stop)
			wg.Wait()
			if took > 10*time.Second {
				t.Errorf("answered after %v", took)
			}
			if r.status == http.StatusOK {
				return // the transform survived it: a refused fetch it caught
			}
			var body struct {
				ProxyError httpapi.Problem `json:"proxy_error"`
			}
			if err := json.Unmarshal(r.body, &body); err != nil || body.ProxyError.Status == 0 {
				t.Errorf("answer %d %s, want a proxy_error", r.status, r.body)
			}
		})
	}
}
