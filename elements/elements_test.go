package elements_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/elements"
	"github.com/tokenvault/tokenvault/store/memory"
)

// vault opens a Vault on a memory store with a tenant; it returns the
// Vault and the tenant's management key.
func vault(t *testing.T) (*tokenvault.Vault, tokenvault.Credential) {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	return v, boot.Application.Key
}

// app creates an application of type typ with origins.
func app(t *testing.T, v *tokenvault.Vault, mgmt tokenvault.Credential, typ tokenvault.ApplicationType, perms []string, origins ...string) *tokenvault.Application {
	t.Helper()
	a, err := v.CreateApplication(context.Background(), mgmt, tokenvault.CreateApplicationRequest{Name: string(typ), Type: typ,
		Permissions: perms, AllowedOrigins: origins})
	if err != nil {
		t.Fatalf("CreateApplication(%s, %q): %v", typ, origins, err)
	}
	return a
}

func get(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	return w
}

// TestFrameHeaders: every frame names the embedding origin as its only
// frame-ancestor when the public application lists it, and 'none' for
// any other origin, an unknown key, a private key, or a missing
// parameter; the page is the same, and says nothing of why.
func TestFrameHeaders(t *testing.T) {
	t.Parallel()
	v, mgmt := vault(t)
	pub := app(t, v, mgmt, tokenvault.Public, []string{"token:create"}, "https://shop.example", "http://127.0.0.1:8081")
	bare := app(t, v, mgmt, tokenvault.Public, []string{"token:create"})
	priv := app(t, v, mgmt, tokenvault.Private, []string{"token:create"})
	h := elements.Handler(v, elements.Options{})
	frame := func(page, key, origin string) string {
		return elements.Prefix + page + "?key=" + string(key) + "&origin=" + origin + "&instance=x"
	}
	want := "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors "
	var body string
	for _, page := range []string{"card-number.html", "card-expiry.html", "card-cvc.html", "text.html", "controller.html"} {
		for _, tc := range []struct {
			name, target, ancestor string
		}{
			{"allowed", frame(page, string(pub.Key), "https://shop.example"), "https://shop.example"},
			{"allowed with a port", frame(page, string(pub.Key), "http://127.0.0.1:8081"), "http://127.0.0.1:8081"},
			{"other origin", frame(page, string(pub.Key), "https://evil.example"), "'none'"},
			{"origin not normalized", frame(page, string(pub.Key), "https://SHOP.example"), "'none'"},
			{"no origin", elements.Prefix + page + "?key=" + string(pub.Key), "'none'"},
			{"two origins", frame(page, string(pub.Key), "https://shop.example") + "&origin=https://evil.example", "'none'"},
			{"public without origins", frame(page, string(bare.Key), "https://shop.example"), "'none'"},
			{"private key", frame(page, string(priv.Key), "https://shop.example"), "'none'"},
			{"management key", frame(page, string(mgmt), "https://shop.example"), "'none'"},
			{"unknown key", frame(page, "nope", "https://shop.example"), "'none'"},
			{"no key", elements.Prefix + page, "'none'"},
		} {
			t.Run(page+"/"+tc.name, func(t *testing.T) {
				w := get(t, h, tc.target)
				if w.Code != 200 {
					t.Fatalf("GET %s: %d", tc.target, w.Code)
				}
				hd := w.Result().Header
				if got := hd.Get("Content-Security-Policy"); got != want+tc.ancestor {
					t.Errorf("CSP %q, want %q", got, want+tc.ancestor)
				}
				for k, v := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
					"Referrer-Policy": "no-referrer", "Content-Type": "text/html; charset=utf-8", "Access-Control-Allow-Origin": ""} {
					if got := hd.Get(k); got != v {
						t.Errorf("%s: %q, want %q", k, got, v)
					}
				}
				if tc.name == "allowed" {
					body = w.Body.String()
				} else if w.Body.String() != body && body != "" {
					t.Error("a refused frame's page differs from an allowed one's")
				}
				if strings.Contains(w.Body.String(), "<script>") || strings.Contains(w.Body.String(), "style=") {
					t.Error("a frame holds inline script or style")
				}
			})
		}
	}
}

// TestScriptHeaders: the merchant's script is loadable by any origin, as
// a script and as a module; the frames' files are not documents.
func TestScriptHeaders(t *testing.T) {
	t.Parallel()
	v, _ := vault(t)
	h := elements.Handler(v, elements.Options{})
	for _, name := range []string{"elements.js", "elements.mjs"} {
		w := get(t, h, elements.Prefix+name)
		hd := w.Result().Header
		if w.Code != 200 || hd.Get("Access-Control-Allow-Origin") != "*" || hd.Get("Content-Type") != "text/javascript; charset=utf-8" ||
			hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
			t.Errorf("GET %s: %d %v", name, w.Code, hd)
		}
	}
	first := get(t, h, elements.Prefix+"elements.js")
	req := httptest.NewRequest("GET", elements.Prefix+"elements.js", nil)
	req.Header.Set("If-None-Match", first.Result().Header.Get("ETag"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if first.Result().Header.Get("ETag") == "" || w.Code != http.StatusNotModified {
		t.Errorf("revalidating elements.js with its ETag %q: %d, want 304", first.Result().Header.Get("ETag"), w.Code)
	}
	js := first.Body.String()
	if !strings.Contains(js, "const tvCommon") || !strings.Contains(js, "globalThis.TokenVaultElements") {
		t.Error("elements.js does not hold common.js and merchant.js")
	}
	for name, ctype := range map[string]string{"field.js": "text/javascript; charset=utf-8", "controller.js": "text/javascript; charset=utf-8",
		"common.js": "text/javascript; charset=utf-8", "field.css": "text/css; charset=utf-8"} {
		w := get(t, h, elements.Prefix+name)
		hd := w.Result().Header
		if w.Code != 200 || hd.Get("Content-Type") != ctype || hd.Get("Content-Security-Policy") != "default-src 'none'; frame-ancestors 'none'" ||
			hd.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET %s: %d %v", name, w.Code, hd)
		}
	}
	for _, target := range []string{elements.Prefix, elements.Prefix + "nothing.js", elements.Prefix + "../console/index.html",
		elements.Prefix + "static/field.js", elements.Prefix + "merchant.js", "/elements/v2/elements.js", elements.Prefix + "%00"} {
		if w := get(t, h, target); w.Code != 404 || w.Result().Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d, want 404 with nosniff", target, w.Code)
		}
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", elements.Prefix+"elements.js", strings.NewReader("x")))
	if w.Code != 405 || w.Result().Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", w.Code, w.Result().Header)
	}
}

// TestElementOrigins: the Vault's lookup answers a public key with its
// origins and refuses every other key.
func TestElementOrigins(t *testing.T) {
	t.Parallel()
	v, mgmt := vault(t)
	ctx := context.Background()
	pub := app(t, v, mgmt, tokenvault.Public, []string{"token:create"}, "HTTPS://Shop.Example:443", "http://127.0.0.1:8081")
	got, err := v.ElementOrigins(ctx, pub.Key)
	if err != nil || strings.Join(got, " ") != "https://shop.example http://127.0.0.1:8081" {
		t.Errorf("ElementOrigins(public) = %q, %v", got, err)
	}
	priv := app(t, v, mgmt, tokenvault.Private, []string{"token:read"})
	for _, tc := range []struct {
		key  tokenvault.Credential
		kind tokenvault.Kind
	}{{priv.Key, tokenvault.PermissionDenied}, {mgmt, tokenvault.PermissionDenied}, {"nope", tokenvault.Unauthenticated}, {"", tokenvault.Unauthenticated}} {
		if got, err := v.ElementOrigins(ctx, tc.key); !isKind(err, tc.kind) || got != nil {
			t.Errorf("ElementOrigins(%.8q) = %q, %v; want %s", tc.key, got, err, tc.kind)
		}
	}
}

func isKind(err error, k tokenvault.Kind) bool {
	var e *tokenvault.Error
	return errors.As(err, &e) && e.Kind == k
}

// TestAllowedOrigins: created, read, listed, kept by an update that does
// not name them, replaced and removed by one that does; refused for an
// application that is not public and for a malformed origin, naming the
// field.
func TestAllowedOrigins(t *testing.T) {
	t.Parallel()
	v, mgmt := vault(t)
	ctx := context.Background()
	pub := app(t, v, mgmt, tokenvault.Public, []string{"token:create"}, "https://shop.example")
	if strings.Join(pub.AllowedOrigins, " ") != "https://shop.example" {
		t.Fatalf("created with %q", pub.AllowedOrigins)
	}
	read, err := v.GetApplication(ctx, mgmt, pub.ID)
	if err != nil || strings.Join(read.AllowedOrigins, " ") != "https://shop.example" {
		t.Fatalf("GetApplication: %q, %v", read.AllowedOrigins, err)
	}
	upd, err := v.UpdateApplication(ctx, mgmt, pub.ID, tokenvault.UpdateApplicationRequest{Name: "renamed", Permissions: []string{"token:create"}})
	if err != nil || strings.Join(upd.AllowedOrigins, " ") != "https://shop.example" {
		t.Fatalf("an update without allowed_origins: %q, %v; want them kept", upd.AllowedOrigins, err)
	}
	two := []string{"https://a.example", "http://localhost:8081"}
	upd, err = v.UpdateApplication(ctx, mgmt, pub.ID, tokenvault.UpdateApplicationRequest{Name: "renamed", Permissions: []string{"token:create"}, AllowedOrigins: &two})
	if err != nil || strings.Join(upd.AllowedOrigins, " ") != "https://a.example http://localhost:8081" {
		t.Fatalf("an update replacing allowed_origins: %q, %v", upd.AllowedOrigins, err)
	}
	none := []string{}
	upd, err = v.UpdateApplication(ctx, mgmt, pub.ID, tokenvault.UpdateApplicationRequest{Name: "renamed", Permissions: []string{"token:create"}, AllowedOrigins: &none})
	if err != nil || upd.AllowedOrigins != nil {
		t.Fatalf("an update removing allowed_origins: %q, %v", upd.AllowedOrigins, err)
	}
	for _, tc := range []struct {
		typ     tokenvault.ApplicationType
		origins []string
		field   string
	}{
		{tokenvault.Private, []string{"https://shop.example"}, "allowed_origins"},
		{tokenvault.Management, []string{"https://shop.example"}, "allowed_origins"},
		{tokenvault.Public, []string{"https://shop.example/pay"}, "allowed_origins[0]"},
		{tokenvault.Public, []string{"https://*.shop.example"}, "allowed_origins[0]"},
		{tokenvault.Public, []string{"https://shop.example", "https://shop.example:443"}, "allowed_origins[1]"},
	} {
		perms := []string{"token:create"}
		if tc.typ == tokenvault.Management {
			perms = []string{"application:read"}
		}
		_, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "x", Type: tc.typ, Permissions: perms, AllowedOrigins: tc.origins})
		var e *tokenvault.Error
		if !errors.As(err, &e) || e.Kind != tokenvault.Invalid || len(e.Fields[tc.field]) == 0 {
			t.Errorf("CreateApplication(%s, %q) = %v, want Invalid at %s", tc.typ, tc.origins, err, tc.field)
		}
	}
	priv := app(t, v, mgmt, tokenvault.Private, []string{"token:read"})
	one := []string{"https://shop.example"}
	if _, err := v.UpdateApplication(ctx, mgmt, priv.ID, tokenvault.UpdateApplicationRequest{Name: "p", Permissions: []string{"token:read"}, AllowedOrigins: &one}); !isKind(err, tokenvault.Invalid) {
		t.Errorf("UpdateApplication(private, origins) = %v, want Invalid", err)
	}
}

// TestFramesBehindAProxy: a public key's calls are limited per caller's
// address, and a frame's lookup of its key is one. Behind a proxy, with
// TrustForwardedFor, a caller who loads frames in a loop uses up the
// bucket of its own address (the last X-Forwarded-For entry), not the
// proxy's: another shopper's frames still embed. Without it every
// shopper has the proxy's address, and shares that caller's bucket.
func TestFramesBehindAProxy(t *testing.T) {
	t.Parallel()
	for _, trust := range []bool{true, false} {
		key := make([]byte, 32)
		rand.Read(key)
		v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1}, Limits: tokenvault.LimitOptions{RatePerKey: 1}})
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Shop"})
		if err != nil {
			t.Fatal(err)
		}
		pub := app(t, v, boot.Application.Key, tokenvault.Public, []string{"token:create"}, "https://shop.example")
		h := elements.Handler(v, elements.Options{TrustForwardedFor: trust})
		load := func(caller string) string {
			r := httptest.NewRequest("GET", elements.Prefix+"card-number.html?key="+string(pub.Key)+"&origin=https://shop.example", nil)
			r.RemoteAddr = "10.0.0.1:4321" // the proxy
			r.Header.Set("X-Forwarded-For", caller)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			csp := w.Result().Header.Get("Content-Security-Policy")
			return csp[strings.LastIndex(csp, " ")+1:]
		}
		// The looping caller's bucket runs out (a refill of one a second
		// may let a load through now and then: it loads until refused).
		// Then another shopper, from an address never seen before.
		sharedOut := false
		for round := range 20 {
			refused := false
			for range 50 {
				if load("203.0.113.9") == "'none'" {
					refused = true
					break
				}
			}
			if !refused {
				t.Fatalf("trust %v: 50 loads in a row from one caller were never refused: no rate limit?", trust)
			}
			got := load(fmt.Sprintf("198.51.100.%d", round+1))
			if trust && got != "https://shop.example" {
				t.Fatalf("with TrustForwardedFor, another shopper's frame after one caller's loop: frame-ancestors %s, want https://shop.example", got)
			}
			if !trust && got == "'none'" {
				sharedOut = true
				break
			}
		}
		if !trust && !sharedOut {
			t.Error("without TrustForwardedFor, 20 rounds never left another shopper refused: the test shows nothing of the proxy's shared address")
		}
	}
}
