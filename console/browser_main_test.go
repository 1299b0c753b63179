package console_test

import (
	"flag"
	"os"
	"testing"

	"github.com/tokenvault/tokenvault/internal/browsertest"
)

// screenshots: write the main pages' screenshots (1280 px wide) under
// docs/console/: go test ./console -run TestConsole -screenshots
var screenshots = flag.Bool("screenshots", false, "write screenshots of the main pages to ../docs/console")

// TestMain runs the tests in one Chromium (internal/browsertest), shared
// by the tests: each opens its own tab.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(browsertest.Main(m, "console"))
}
