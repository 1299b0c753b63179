package webhooks_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/webhooks"
)

// A receiver checks every delivery before trusting its body, and drops a
// webhook-id it has already processed (deliveries are at least once).
func Example() {
	secret := os.Getenv("TOKENVAULT_WEBHOOK_SECRET") // "whsec_..." shown at creation
	if secret == "" {
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // for this example only
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable", http.StatusBadRequest)
			return
		}
		if err := webhooks.Verify(secret, r.Header, body); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// ... skip if r.Header.Get(webhooks.HeaderID) was seen, else
		// decode the body (a tokenvault.WebhookEvent) and act on it.
		w.WriteHeader(http.StatusNoContent)
	})

	body := []byte(`{"event":{"id":"evt_1","type":"webhook.test"}}`)
	h, _ := webhooks.Headers("evt_1", time.Now(), body, secret)
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(string(body)))
	req.Header = h
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output: 204
}
