package jsrt

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"
)

// The event loop. goja runs promise jobs (microtasks) itself whenever a
// call from Go into JavaScript returns, so async functions, await and
// promise chains need nothing more. What remains are timers: setTimeout and
// setInterval callbacks are macrotasks, run one at a time on the worker
// goroutine, in order of due time, until the code's promise settles. They
// are bounded by the invocation's deadline like everything else.
//
// The host's client calls are synchronous, so once no timer is pending
// nothing can ever settle a pending promise: await reports Timeout at once
// instead of waiting for the deadline.

// await drives the loop until p settles and returns its value, or the
// error it was rejected with.
func (s *session) await(p *goja.Promise) (goja.Value, error) {
	var wait *time.Timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	for {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return p.Result(), nil
		case goja.PromiseStateRejected:
			return nil, s.thrown(p.Result())
		}
		if len(s.timers) == 0 {
			return nil, &Error{Kind: Timeout, Status: 500, Message: "the code's promise never settles: it waits for something that cannot happen"}
		}
		t := s.timers[0]
		if t.when.After(s.deadline) {
			// Nothing can happen before this timer, which is due too late.
			s.stop(Timeout, s.timeoutMessage())
			return nil, s.stopErr
		}
		if d := time.Until(t.when); d > 0 {
			if wait == nil {
				wait = time.NewTimer(d)
			} else {
				wait.Reset(d)
			}
			select {
			case <-wait.C:
			case <-s.stopped:
				return nil, s.stopErr
			}
		}
		if err := s.fire(t); err != nil {
			return nil, err
		}
	}
}

// fire runs the earliest timer, t, and reschedules it if it repeats.
func (s *session) fire(t *timer) error {
	if t.every > 0 {
		t.when = time.Now().Add(t.every)
		heap.Fix(&s.timers, t.index)
	} else {
		heap.Pop(&s.timers)
	}
	if _, err := t.fn(goja.Undefined(), t.args...); err != nil {
		return s.failure(err) // an exception in a timer is uncaught: the code failed
	}
	return nil
}

type timer struct {
	id    int64
	when  time.Time
	every time.Duration // > 0 for setInterval
	fn    goja.Callable
	args  []goja.Value
	seq   int64 // order among timers due at the same time
	index int
}

// timerQueue is a heap of pending timers, earliest first.
type timerQueue []*timer

func (q timerQueue) Len() int { return len(q) }
func (q timerQueue) Less(i, j int) bool {
	if q[i].when.Equal(q[j].when) {
		return q[i].seq < q[j].seq
	}
	return q[i].when.Before(q[j].when)
}
func (q timerQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *timerQueue) Push(x any) {
	t := x.(*timer)
	t.index = len(*q)
	*q = append(*q, t)
}
func (q *timerQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	t.index = -1
	return t
}

// timerFunc is setTimeout, or setInterval when repeat is set. Delays are
// clamped to at least 1ms, as in Node; ids are numbers.
func (s *session) timerFunc(repeat bool) goja.Value {
	name := "setTimeout"
	if repeat {
		name = "setInterval"
	}
	return s.fn(name, 2, func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(s.hostTypeError("The \"callback\" argument must be of type function"))
		}
		if len(s.timers) >= maxPendingTimers {
			panic(s.newError(fmt.Sprintf("too many pending timers (the limit is %d)", maxPendingTimers)))
		}
		ms := call.Argument(1).ToFloat()
		if math.IsNaN(ms) || ms < 1 || ms > math.MaxInt32 {
			ms = 1
		}
		d := time.Duration(ms * float64(time.Millisecond))
		s.timerSeq++
		t := &timer{id: s.timerSeq, seq: s.timerSeq, when: time.Now().Add(d), fn: fn}
		if len(call.Arguments) > 2 {
			t.args = append([]goja.Value(nil), call.Arguments[2:]...)
		}
		if repeat {
			t.every = d
		}
		heap.Push(&s.timers, t)
		return s.vm.ToValue(t.id)
	})
}

// clearTimerFunc is clearTimeout and clearInterval.
func (s *session) clearTimerFunc() goja.Value {
	return s.fn("clearTimeout", 1, func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).ToInteger()
		for i, t := range s.timers {
			if t.id == id {
				heap.Remove(&s.timers, i)
				break
			}
		}
		return goja.Undefined()
	})
}
