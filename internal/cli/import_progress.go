package cli

import (
	"fmt"
	"io"
	"time"
)

// importProgress draws the progress line of an import on a terminal:
// lines done, their rate, and the time left from the bytes read of the
// file's size. Nothing when out is not a terminal (a pipe or a file gets
// the JSON summary only).
type importProgress struct {
	out   io.Writer
	on    bool
	size  int64
	began time.Time
	last  time.Time
	// from and base are where this run started: the rate and time left
	// count this run's lines and bytes, not a resumed run's.
	from, base int64
}

func newImportProgress(out io.Writer, size int64, began time.Time, st importState) *importProgress {
	return &importProgress{out: out, on: isTerminal(out), size: size, began: began,
		from: st.Offset, base: st.Imported + st.Skipped + st.Rejected}
}

func (p *importProgress) show(st importState, offset int64) {
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	elapsed := time.Since(p.began).Seconds()
	done := st.Imported + st.Skipped + st.Rejected
	rate := float64(done-p.base) / max(elapsed, 0.001)
	left := "?"
	if read := offset - p.from; read > 0 && p.size > offset {
		left = time.Duration(elapsed * float64(p.size-offset) / float64(read) * float64(time.Second)).Round(time.Second).String()
	}
	pct := 100.0
	if p.size > 0 {
		pct = 100 * float64(offset) / float64(p.size)
	}
	fmt.Fprintf(p.out, "\r\033[K%d imported, %d skipped, %d rejected  %.0f/s  %.1f%%  %s left",
		st.Imported, st.Skipped, st.Rejected, rate, pct, left)
}

// done ends the progress line.
func (p *importProgress) done() {
	if p.on && !p.last.IsZero() {
		fmt.Fprint(p.out, "\r\033[K")
	}
}
