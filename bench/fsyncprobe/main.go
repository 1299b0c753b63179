//go:build linux

// Command fsyncprobe measures what a bbolt-like commit costs the disk: it
// writes a 16 KB run of pages and syncs it, then a 4 KB meta page and syncs
// that, 1,500 times, into a file prepared three ways: a hole (ftruncate, as
// bbolt grows its file), zeros written and synced first (store/bolt's
// reserve), and fallocate. BENCHMARKS.md gives its figures, idle and with
// two busy CPUs (for example: for i in 1 2; do timeout 15 sh -c 'while :; do
// :; done' & done).
//
//	go run ./bench/fsyncprobe -dir /tmp
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	dir := flag.String("dir", os.TempDir(), "directory for the test file (on the disk to measure)")
	rounds := flag.Int("rounds", 1500, "commits per file")
	flag.Parse()
	for _, mode := range []string{"hole", "zeros", "fallocate"} {
		d, err := run(filepath.Join(*dir, "fsyncprobe.db"), mode, *rounds)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fsyncprobe:", err)
			os.Exit(1)
		}
		fmt.Printf("%-9s a page run and a meta page, each synced: %v a commit\n", mode, d)
	}
}

func run(path, mode string, rounds int) (time.Duration, error) {
	os.Remove(path)
	defer os.Remove(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	run := make([]byte, 16<<10)
	size := int64(rounds+1) * int64(len(run))
	switch mode {
	case "hole":
		err = f.Truncate(size)
	case "zeros":
		_, err = f.Write(make([]byte, size))
	case "fallocate":
		err = syscall.Fallocate(int(f.Fd()), 0, 0, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for i := range rounds {
		if _, err := f.WriteAt(run, 4096+int64(i)*int64(len(run))); err != nil {
			return 0, err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0, err
		}
		if _, err := f.WriteAt(run[:4096], 0); err != nil {
			return 0, err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(rounds), nil
}
