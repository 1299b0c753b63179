package tokenvault

import (
	"sync"
	"time"
)

// hookClock is a clock the test moves (Options.Now).
type hookClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *hookClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }

func (c *hookClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.at = c.at.Add(d) }
