package auditlog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/backoff"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Export queue and retry timing.
const (
	// exportBatch bounds the lines one delivery carries and one
	// transaction removes from a queue.
	exportBatch = 500
	// maxExportBackoff caps the wait between failed deliveries.
	maxExportBackoff = time.Minute
	// maxExportGap is the longest an exporter woken by new lines waits,
	// counted from the start of its previous pass, before it looks again
	// (ExportConfig.Interval when shorter). Each pass folds the store's
	// appended lines (a commit) and removes what it delivered (another),
	// so a pass for every group of reads cost a loaded server about a
	// quarter of its reads (BENCHMARKS.md, session 11); paced, the passes
	// are at most about four a second, each with more lines, and a line
	// waits about a quarter of a second plus a pass. A pass that finds a
	// full batch still goes on at once.
	maxExportGap = 250 * time.Millisecond
)

// Run delivers every sink's queue, one goroutine per sink, until ctx is
// done, and returns once they all have.
func (x *Exporter) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, e := range x.sinks {
		wg.Go(func() { x.run(ctx, e) })
	}
	wg.Wait()
}

// Pass runs one pass of the exporter of the sink named sink, as its
// goroutine does, and reports whether its queue held more than a batch:
// for tests that drive the export step by step. An unknown sink does
// nothing.
func (x *Exporter) Pass(ctx context.Context, sink string) (more bool, err error) {
	for _, e := range x.sinks {
		if e.name == sink {
			return x.once(ctx, e)
		}
	}
	return false, nil
}

// run delivers e's queue until ctx is done: a batch at a time, removing
// a batch's entries only once the sink has it. A failed delivery is
// retried after a wait that doubles up to maxExportBackoff, jittered
// (internal/backoff) so that instances sharing a sink spread out.
func (x *Exporter) run(ctx context.Context, e *sinkExporter) {
	interval := x.cfg.Interval
	wait := backoff.Backoff{Base: x.cfg.Backoff, Max: maxExportBackoff}
	// Since Go 1.23 a stopped or reset timer never delivers a stale
	// tick, so it needs no draining.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	gap := min(interval, maxExportGap)
	x.countQueue(ctx, e)
	for {
		began := time.Now()
		more, err := x.once(ctx, e)
		if ctx.Err() != nil {
			return
		}
		d := interval
		switch {
		case err != nil:
			d = wait.Next()
			x.cfg.Logger.Warn("tokenvault: audit export failed; retrying", "sink", e.name, "err", err, "retry_in", d)
		case more:
			wait.Reset()
			continue
		default:
			wait.Reset()
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-e.wake:
			if err != nil {
				// A failing sink waits out its backoff.
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			} else if rest := gap - time.Since(began); rest > 0 {
				// Lines keep coming: pace the passes (maxExportGap).
				timer.Reset(rest)
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			}
			timer.Stop()
		}
	}
}

// countQueue counts e's queue once, at start, so that Stats shows a
// backlog left by an earlier run before the exporter has worked it down;
// afterwards commits and deliveries keep the count.
func (x *Exporter) countQueue(ctx context.Context, e *sinkExporter) {
	n := 0
	since := e.committedCounts()
	err := x.cfg.Work.View(ctx, func(t *unit.Tx) error {
		n = 0
		return t.ScanKeys(e.prefix, func(barrier.Key, string) error {
			n++
			return nil
		})
	})
	if err == nil {
		e.recount(n, since)
	}
}

// once delivers up to exportBatch lines and checkpoints of e's queue and
// removes their entries. more reports that the queue held more. A line
// it finds not chained yet (appended by another instance after this pass
// folded) keeps its entry for the next pass: no line leaves without its
// link.
func (x *Exporter) once(ctx context.Context, e *sinkExporter) (more bool, err error) {
	var keys []barrier.Key
	var rests []string
	var events []auditchain.Event
	var waiting int
	since := e.committedCounts()
	if err := x.cfg.Link(ctx); err != nil {
		return false, err
	}
	err = x.cfg.Work.View(ctx, func(t *unit.Tx) error {
		keys, rests, events, more, waiting = keys[:0], rests[:0], events[:0], false, 0
		err := t.Scan(e.prefix, "", exportBatch+1, func(k barrier.Key, rest string) error {
			keys, rests = append(keys, k), append(rests, rest)
			return nil
		})
		if err != nil {
			return err
		}
		if len(keys) > exportBatch {
			keys, rests, more = keys[:exportBatch], rests[:exportBatch], true
		}
		kept := keys[:0]
		for i, rest := range rests {
			ev, state, err := ExportEvent(t, rest, x.cfg.TenantGone)
			if err != nil {
				return err
			}
			switch state {
			case ExportWait:
				waiting++
				continue // not removed: the next pass delivers it
			case ExportSend:
				events = append(events, ev)
			}
			kept = append(kept, keys[i])
		}
		keys = kept
		return nil
	})
	if err != nil {
		return false, err
	}
	if !more {
		e.recount(len(keys)+waiting, since)
	} else if p := e.pending.Load(); p <= exportBatch {
		e.pending.CompareAndSwap(p, exportBatch+1) // at least that many
	}
	if len(rests) > 0 {
		n, _ := strconv.ParseUint(strings.SplitN(rests[0], "/", 2)[0], 16, 64)
		e.oldest.Store(int64(n))
	} else {
		e.oldest.Store(0)
	}
	if len(keys) == 0 {
		return false, nil
	}
	if len(events) > 0 {
		err := e.sink.Deliver(ctx, events)
		if x.cfg.Exported != nil && ctx.Err() == nil {
			x.cfg.Exported(e.name, len(events), err)
		}
		if err != nil {
			return false, fmt.Errorf("deliver %d events: %w", len(events), err)
		}
	}
	err = x.cfg.Work.Update(ctx, func(t *unit.Tx) error {
		for _, k := range keys {
			if err := t.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if p := e.pending.Add(-int64(len(keys))); p < 0 {
		e.pending.CompareAndSwap(p, 0)
	}
	if !more && waiting == 0 {
		e.oldest.Store(0)
		if e.pending.Load() > 0 {
			// Lines committed meanwhile: the next read dates them.
			e.oldest.CompareAndSwap(0, barrier.UnixNanos(x.cfg.Now()))
		}
	}
	return more, nil
}
