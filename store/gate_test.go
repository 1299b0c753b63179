package store_test

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

// TestGate: Close waits for a transaction in progress, then refuses new
// ones; a second Close reports that it was closed already.
func TestGate(t *testing.T) {
	var g store.Gate
	if !g.Enter() {
		t.Fatal("Enter on an open gate = false")
	}
	closed := make(chan bool)
	go func() { closed <- g.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a transaction was in progress")
	case <-time.After(50 * time.Millisecond):
	}
	g.Leave()
	if !<-closed {
		t.Error("first Close = false")
	}
	if g.Enter() {
		t.Error("Enter after Close = true")
	}
	if g.Close() {
		t.Error("second Close = true")
	}
}
