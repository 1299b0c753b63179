package jsrt

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNothingLeaksBetweenCalls(t *testing.T) {
	r := New(Options{})
	write := mustCompile(t, r, `
		let count = 0;
		module.exports = () => {
			globalThis.x = 1;
			leaked = 2;
			Array.prototype.foo = 'foo';
			Object.prototype.bar = 'bar';
			String.prototype.repeat = () => 'patched';
			JSON.stringify = () => 'patched';
			console.log = () => 'patched';
			BadRequestError.prototype.status = 999;
			require('crypto').randomUUID = () => 'patched';
			return ++count;
		}`)
	read := mustCompile(t, r, `
		let count = 0;
		module.exports = () => [typeof x, typeof leaked, [].foo, ({}).bar, 'a'.repeat(2), JSON.stringify({a: 1}),
			console.log.name, new BadRequestError('x').status, require('crypto').randomUUID().length, ++count]`)
	want := []any{"undefined", "undefined", nil, nil, "aa", `{"a":1}`, "log", 400.0, 36.0, 1.0}
	for i := range 3 {
		got, err := r.Run(t.Context(), write, nil, Host{})
		if err != nil || got != 1.0 {
			t.Fatalf("write #%d = %v, %v; module state must not persist", i, got, err)
		}
		got, err = r.Run(t.Context(), read, nil, Host{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("read #%d saw another call's changes (-want +got):\n%s", i, diff)
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	r := New(Options{})
	codes := []string{
		`module.exports = async (req) => { globalThis.seen = req.n; await null; return {n: seen, hash: require('crypto').createHash('sha256').update(String(req.n)).digest('hex').length} }`,
		`module.exports = (req) => { Array.prototype.n = req.n; return {n: [].n, hash: 64} }`,
		`module.exports = async (req) => { await new Promise(r => setTimeout(r, 1)); return {n: req.n, hash: 64} }`,
		`module.exports = async (req) => { if (req.n % 7 === 0) throw new BadRequestError('seven'); return {n: req.n, hash: 64} }`,
	}
	progs := make([]*Program, len(codes))
	for i, c := range codes {
		progs[i] = mustCompile(t, r, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 32 {
		wg.Go(func() {
			for i := range 20 {
				n := g*100 + i
				p := progs[n%len(progs)]
				out, err := r.Run(context.Background(), p, map[string]any{"n": n}, Host{})
				if n%len(progs) == 3 && n%7 == 0 {
					if e, ok := err.(*Error); !ok || e.Status != 400 {
						errs <- fmt.Errorf("n=%d: %v, want BadRequestError", n, err)
					}
					continue
				}
				want := map[string]any{"n": float64(n), "hash": 64.0}
				if err != nil || !cmp.Equal(out, want) {
					errs <- fmt.Errorf("n=%d: %v, %v; want %v", n, out, err, want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestConcurrentCompile(t *testing.T) {
	r := New(Options{})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 10 {
				code := fmt.Sprintf("module.exports = () => %d", (g+i)%5)
				p, err := r.Compile(code)
				if err != nil {
					t.Error(err)
					return
				}
				if out, err := r.Run(context.Background(), p, nil, Host{}); err != nil || out != float64((g+i)%5) {
					t.Errorf("Run = %v, %v", out, err)
				}
			}
		})
	}
	wg.Wait()
}
