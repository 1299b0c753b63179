package elements_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// screenshot: write docs/elements.png, the mounted fields on the test's
// merchant page: go test ./elements -run TestElementsInBrowser -screenshot
var screenshot = flag.Bool("screenshot", false, "write the screenshot of the mounted fields to ../docs/elements.png")

// browser is the one Chromium of the package's run, started as the
// console's browser tests start theirs (console/browser_main_test.go:
// the same flags); nil when none was found, with why in noBrowser.
var (
	browser   context.Context
	noBrowser string
)

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
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "elements: chromium did not start:", err)
		return 1
	}
	browser = ctx
	return m.Run()
}
