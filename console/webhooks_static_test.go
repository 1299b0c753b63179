package console_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestWebhookPageKnowsHighVolumeEvents: GET /webhooks/event-types answers
// names only, so the webhooks page keeps the names of the high-volume
// events ("*" leaves them out) to explain them; they must be the
// catalogue's.
func TestWebhookPageKnowsHighVolumeEvents(t *testing.T) {
	b, err := os.ReadFile("static/pages/webhooks.js")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)export const highVolume = \{(.*?)\};`).FindSubmatch(b)
	if block == nil {
		t.Fatal("static/pages/webhooks.js has no highVolume object")
	}
	var page []string
	for _, m := range regexp.MustCompile(`'([a-z.-]+)':`).FindAllSubmatch(block[1], -1) {
		page = append(page, string(m[1]))
	}
	var want []string
	for _, et := range tokenvault.WebhookEventTypes() {
		if et.HighVolume {
			want = append(want, et.Name)
		}
	}
	slices.Sort(page)
	slices.Sort(want)
	if !slices.Equal(page, want) || len(want) == 0 {
		t.Errorf("the webhooks page names %q as high-volume, the catalogue %q", page, want)
	}
}
