package elements_test

import (
	"flag"
	"os"
	"testing"

	"github.com/tokenvault/tokenvault/internal/browsertest"
)

// screenshot: write docs/elements.png, the mounted fields on the test's
// merchant page: go test ./elements -run TestElementsInBrowser -screenshot
var screenshot = flag.Bool("screenshot", false, "write the screenshot of the mounted fields to ../docs/elements.png")

// TestMain runs the tests in one Chromium (internal/browsertest), the
// console's way: each test opens its own tab.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(browsertest.Main(m, "elements"))
}
