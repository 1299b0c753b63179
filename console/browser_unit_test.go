package console_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleJavaScript runs the console's JavaScript unit tests
// (testdata/jstest) in the browser.
func TestConsoleJavaScript(t *testing.T) {
	ctx := tab(t)
	base, _ := testServer(t)
	do(t, ctx, "unit tests", chromedp.Navigate(base+"/jstest/"), chromedp.WaitReady(chromedp.CSS(`body[data-done]`)))
	type result struct {
		Name  string
		Pass  bool
		Error string
	}
	results := eval[[]result](t, ctx, `window.testResults`)
	if len(results) < 10 {
		t.Fatalf("%d JavaScript tests ran", len(results))
	}
	for _, r := range results {
		if !r.Pass {
			t.Errorf("%s: %s", r.Name, r.Error)
		}
	}
}
