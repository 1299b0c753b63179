// Package browsertest runs a package's browser tests in one headless
// Chromium, driven by chromedp: the console's and the hosted elements'.
// A package's TestMain calls Main, which starts the browser once for the
// whole run (each test opens a tab of it with Tab); where no Chromium is
// installed, the browser tests skip, or fail under CI=true, where .ci/run
// installs it.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Wait is how long a step of a browser test may take: generous, for a
// loaded 2-CPU machine.
const Wait = time.Minute

// The one Chromium of the test binary's run; nil when none was found,
// with why in noBrowser.
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

// Main starts Chromium (1280x900, no GPU; without its sandbox as root,
// where it refuses to run), runs the package's tests, stops the browser
// and returns the exit code for os.Exit. pkg names the package in a
// start-up failure's message.
func Main(m *testing.M, pkg string) int {
	path := chromiumPath()
	if path == "" {
		noBrowser = "no chromium on PATH (apt-get install chromium)"
		return m.Run()
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	// The first run starts the browser; it lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: chromium did not start: %v\n", pkg, err)
		return 1
	}
	browser = ctx
	return m.Run()
}

// Tab opens a tab (1280x900) of the run's browser, closed when t ends, or
// skips t when there is none (fails it under CI=true); what names the
// tests in that message ("the console's browser tests").
func Tab(t *testing.T, what string) context.Context {
	t.Helper()
	if browser == nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s: %s cannot run", noBrowser, what)
		}
		t.Skipf("%s: %s are skipped (CI=true makes this a failure)", noBrowser, what)
	}
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// Eval evaluates a JavaScript expression in ctx's page (awaiting a
// promise) into T, within Wait.
func Eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}
