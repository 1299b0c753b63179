package events

import (
	"testing"
	"time"
)

// TestBody is the envelope around the stored event, verbatim.
func TestBody(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 600, time.UTC)
	got := string(Body([]byte(`{"id":"e","type":"webhook.test"}`), at))
	want := `{"event":{"id":"e","type":"webhook.test"},"delivered_at":"2030-01-02T03:04:05.0000006Z"}`
	if got != want {
		t.Errorf("Body = %s, want %s", got, want)
	}
}
