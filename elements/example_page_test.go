package elements_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/elements"
	"github.com/tokenvault/tokenvault/httpapi"
)

// exampleVault is the vault examples/elements is written against.
const exampleVault = "http://127.0.0.1:8080"

// TestExamplePage runs examples/elements as its README does, against a
// test vault (the pages' vault URL rewritten to it): the page with one
// script tag tokenizes a card that a private key reads back, and the
// module page creates a token intent.
func TestExamplePage(t *testing.T) {
	ctx := tab(t)
	v, mgmt := vault(t)
	mux := http.NewServeMux()
	mux.Handle(elements.Prefix, elements.Handler(v, elements.Options{}))
	mux.Handle("/", httpapi.New(v, httpapi.Options{}))
	api := httptest.NewServer(mux)
	t.Cleanup(api.Close)
	dir := filepath.Join("..", "examples", "elements")
	example := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "" {
			name = "index.html"
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(name)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		types := map[string]string{".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
		w.Header().Set("Content-Type", types[filepath.Ext(name)])
		w.Write([]byte(strings.ReplaceAll(string(b), exampleVault, api.URL)))
	}))
	t.Cleanup(example.Close)
	origin := strings.Replace(example.URL, "127.0.0.1", "localhost", 1)
	pub := app(t, v, mgmt, tokenvault.Public, []string{"token:create"}, origin)
	reader, err := v.CreateApplication(context.Background(), mgmt, tokenvault.CreateApplicationRequest{Name: "backend", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "reveal", Permissions: []string{"token:read"}}}})
	if err != nil {
		t.Fatal(err)
	}

	for _, page := range []string{"/", "/module.html"} {
		do(t, ctx, "load "+page, chromedp.Navigate(origin+page+"?key="+string(pub.Key)))
		until(t, ctx, "fields mounted", `document.getElementById('pay').disabled === false || document.getElementById('status').textContent !== ''`)
		if s := eval[string](t, ctx, `document.getElementById('status').textContent`); s != "" {
			t.Fatalf("%s: %s", page, s)
		}
		typeIntoFrame(t, ctx, "#number", "card-number.html", "4242424242424242")
		typeIntoFrame(t, ctx, "#expiry", "card-expiry.html", "1234")
		typeIntoFrame(t, ctx, "#cvc", "card-cvc.html", "123")
		until(t, ctx, "brand shown", `document.getElementById('brand').textContent === 'visa'`)
		do(t, ctx, "pay", chromedp.Click(chromedp.CSS("#pay"), chromedp.NodeVisible))
		until(t, ctx, "answer shown", `/^Token|error|invalid/i.test(document.getElementById('status').textContent)`)
		status := eval[string](t, ctx, `document.getElementById('status').textContent`)
		if page == "/module.html" {
			if !strings.HasPrefix(status, "Token intent ") || !strings.Contains(status, "visa ending 4242") {
				t.Errorf("module page: %q", status)
			}
			continue
		}
		id := regexp.MustCompile(`^Token (\S+) \(visa ending 4242\)`).FindStringSubmatch(status)
		if id == nil {
			t.Fatalf("page: %q", status)
		}
		tok, err := v.GetToken(context.Background(), reader.Key, id[1])
		if err != nil {
			t.Fatalf("the private key reads the token: %v", err)
		}
		if c, _ := tok.Data.(map[string]any); c["number"] != "4242424242424242" {
			t.Errorf("the token holds %v", tok.Data)
		}
	}
}

// typeIntoFrame clicks the merchant's element sel, waits for the input
// of the frame page inside it to have the focus, and types keys.
func typeIntoFrame(t *testing.T, ctx context.Context, sel, page, keys string) {
	t.Helper()
	box := eval[[]float64](t, ctx, `(() => { const r = document.querySelector(`+quote(sel)+` + ' iframe').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`)
	do(t, ctx, "click "+sel, chromedp.MouseClickXY(box[0], box[1]))
	until(t, frameTab(t, ctx, page), page+" focused", `document.hasFocus() && document.activeElement?.id === 'input'`)
	do(t, ctx, "type into "+sel, chromedp.KeyEvent(keys))
}
