//go:build unix

package jsrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goja's parser reads the file a sourceMappingURL comment names unless
// source maps are disabled (resolved against the script's name, so a
// relative path is read relative to the working directory). A FIFO shows
// whether anyone opens it: a reader blocks until a writer comes.
func TestSourceMapURLReadsNoFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "map.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, fifo)
	if err != nil {
		t.Skip(err)
	}
	comment := "\n//# sourceMappingURL=" + filepath.ToSlash(rel)
	r := New(Options{Timeout: 2 * time.Second})

	// unblock releases a reader stuck on the FIFO, failing the test.
	unblock := func(what string) {
		t.Errorf("%s opened the file named by a sourceMappingURL comment", what)
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	within := func(what string, f func() error) {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(time.Second):
			unblock(what)
			<-done
		}
	}
	within("Compile", func() error {
		_, err := r.Compile("module.exports = () => 1" + comment)
		return err
	})
	// eval and new Function compile nothing at run time (hardening.go):
	// they throw before any parser could read a file.
	for _, code := range []string{
		"module.exports = () => eval('1'+" + quote(comment+"\n") + ")",
		"module.exports = () => new Function(" + quote("return 2"+comment+"\n") + ")()",
	} {
		within(code, func() error {
			_, err := run(t, r, code, nil, nil)
			if err == nil || !strings.Contains(err.Error(), "cannot compile code from a string") {
				return fmt.Errorf("err = %v, want the refusal", err)
			}
			return nil
		})
	}

	// With no reader on the FIFO, opening it for writing without blocking
	// fails with ENXIO.
	f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		f.Close()
		t.Fatal("something still has the FIFO open for reading")
	}
	if !errors.Is(err, syscall.ENXIO) {
		t.Fatalf("open: %v", err)
	}
}

func quote(s string) string {
	out := []byte{'\''}
	for _, c := range []byte(s) {
		switch c {
		case '\n':
			out = append(out, '\\', 'n')
		case '\'', '\\':
			out = append(out, '\\', c)
		default:
			out = append(out, c)
		}
	}
	return string(append(out, '\''))
}
