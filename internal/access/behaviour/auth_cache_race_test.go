package access_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// pausingClock is a clock that, once armed, holds the next caller of Now
// until released: a way to stop a request inside its store transaction.
type pausingClock struct {
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (c *pausingClock) Now() time.Time {
	c.mu.Lock()
	hold := c.armed
	c.armed = false
	c.mu.Unlock()
	if hold {
		close(c.entered)
		<-c.release
	}
	return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
}

// TestDeletedKeyIsNotCachedFromAnOldSnapshot: a request whose bbolt read
// snapshot predates a key's deletion must not put the key into the auth
// cache as valid after the deletion voided it.
func TestDeletedKeyIsNotCachedFromAnOldSnapshot(t *testing.T) {
	s, err := bolt.Open(filepath.Join(t.TempDir(), "v.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	clock := &pausingClock{entered: make(chan struct{}), release: make(chan struct{})}
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Now: clock.Now, Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	doomed, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "doomed", Type: tokenvault.Management, Permissions: []string{tokenvault.PermApplicationRead}})
	if err != nil {
		t.Fatal(err)
	}

	// Leave free pages behind, so that the deletion below commits without
	// growing the file: bbolt cannot remap while a read transaction is
	// open, and the deletion would then wait for the paused reader.
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{}
	for i := range 2000 {
		body[string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676))] = "value"
	}
	for range 3 {
		if _, err := v.Tokenize(ctx, app.Key, body); err != nil {
			t.Fatal(err)
		}
	}

	clock.mu.Lock()
	clock.armed = true
	clock.mu.Unlock()
	done := make(chan error, 1)
	go func() { // holds a snapshot in which the key is valid
		_, err := v.ListApplications(ctx, doomed.Key, tokenvault.ListApplicationsRequest{})
		done <- err
	}()
	<-clock.entered
	deleted := make(chan error, 1)
	go func() { deleted <- v.DeleteApplication(ctx, boot.Application.Key, doomed.ID) }()
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(clock.release)
		<-done
		<-deleted
		t.Skip("the deletion waited for the paused reader (bbolt remapped its file): the race cannot be staged")
	}
	close(clock.release)
	<-done // it may succeed: it began before the deletion

	_, err = v.ListApplications(ctx, doomed.Key, tokenvault.ListApplicationsRequest{})
	vaulttest.WantKind(t, "the deleted key, after a request that began before the deletion", err, tokenvault.Unauthenticated)
}
