package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestHeadroomPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, min uint64
		want      int
	}{
		{0, 12 * mib, 100},              // before the first collection
		{4 * mib, 12 * mib, 300},        // a small heap grows by 12 MiB
		{3 * mib, 12 * mib, 400},        // ... whatever its size
		{12 * mib, 12 * mib, 100},       // from there on, as GOGC=100
		{500 * mib, 12 * mib, 100},      // a large heap
		{1024, 12 * mib, 10000},         // bounded
		{12*mib - 1, 12 * mib, 100},     // never below 100
		{6*mib + 1, 12 * mib, 100 + 99}, // rounded down: at least min, about
	} {
		if got := headroomPercent(c.live, c.min); got != c.want {
			t.Errorf("headroomPercent(%d, %d) = %d, want %d", c.live, c.min, got, c.want)
		}
	}
}

// gcPercent reads GOGC as the runtime has it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestGCHeadroomFollowsCollections: after a collection, GOGC lets the
// live heap grow by the headroom; stop puts back the setting it found;
// GOGC in the environment or a headroom of 0 leave the collector alone.
func TestGCHeadroomFollowsCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	debug.SetGCPercent(150)

	noEnv := func(string) string { return "" }
	gogc := func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}
	startGCHeadroom(1<<30, gogc)()
	startGCHeadroom(0, noEnv)()
	runtime.GC()
	if p := gcPercent(); p != 150 {
		t.Fatalf("GOGC = %d with GOGC set or no headroom, want 150", p)
	}

	// A headroom far above any test's live heap: GOGC is raised to the
	// bound, unless the heap grew past 10 MiB.
	g := newGCHeadroom(1 << 30)
	if p := gcPercent(); p <= 150 {
		t.Fatalf("GOGC = %d at start, want it raised", p)
	}
	// It adjusts again after each collection.
	runs := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.runs
	}
	// Each adjustment arms the next one after it counts itself: a test
	// that collected once and waited could collect before the arming, on
	// a loaded machine, and then wait for a collection that GOGC, raised
	// to its bound, puts off for good. So it collects until it sees one.
	for range 2 {
		before := runs()
		waitFor(t, func() bool {
			runtime.GC()
			return runs() > before
		})
	}
	g.stop()
	if p := gcPercent(); p != 150 {
		t.Fatalf("GOGC = %d after stop, want the 150 it found", p)
	}
	runtime.GC() // a cleanup armed before stop must not set it again
	runtime.GC()
	if p := gcPercent(); p != 150 {
		t.Fatalf("GOGC = %d after stop and a collection, want 150", p)
	}
}

// TestGCHeadroomFlag: -gc-headroom and TOKENVAULT_GC_HEADROOM take MiB
// (the flag wins), default to 12, and refuse a negative or absurd value.
func TestGCHeadroomFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want int
	}{
		{nil, "", defaultGCHeadroomMiB},
		{[]string{"-gc-headroom", "0"}, "", 0},
		{nil, "32", 32},
		{[]string{"-gc-headroom=8"}, "32", 8},
	} {
		cfg, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_GC_HEADROOM": c.env}[k] })
		if err != nil || cfg.gcHeadroomMiB != c.want {
			t.Errorf("parseConfig(%q, TOKENVAULT_GC_HEADROOM=%q).gcHeadroomMiB = %d, %v; want %d", c.args, c.env, cfg.gcHeadroomMiB, err, c.want)
		}
	}
	for _, args := range [][]string{{"-gc-headroom", "-1"}, {"-gc-headroom", "2000000"}, {"-gc-headroom", "lots"}} {
		if _, err := parseConfig(args, func(string) string { return "" }); err == nil {
			t.Errorf("parseConfig(%q) accepted", args)
		}
	}
}
