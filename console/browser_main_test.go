package console_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// screenshots: write the main pages' screenshots (1280 px wide) under
// docs/console/: go test ./console -run TestConsole -screenshots
var screenshots = flag.Bool("screenshots", false, "write screenshots of the main pages to ../docs/console")

// browser is the one Chromium of the package's run, shared by the tests
// (each opens its own tab); nil when none was found, with why in
// noBrowser.
var (
	browser   context.Context
	noBrowser string
)

// chromiumPath finds Debian's chromium (or another Chrome) on PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	path := chromiumPath()
	if path == "" {
		noBrowser = "no chromium on PATH (apt-get install chromium)"
		return m.Run()
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	// The first Run starts the browser; it lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "console: chromium did not start:", err)
		return 1
	}
	browser = ctx
	return m.Run()
}
