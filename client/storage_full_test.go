package client_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestClientStorageFull: a 507 from the server is StorageFull through the
// client, as in process, with the RetryAfter of its Retry-After.
func TestClientStorageFull(t *testing.T) {
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	fs := storetest.NewFaultStore(memory.New())
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: fs, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	defer srv.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "b", Type: tokenvault.Private, Permissions: []string{"token:create"}})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(srv.URL, nil)
	fs.FailWith(syscall.ENOSPC)
	fs.FailAfter(0)
	_, err = c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if !errors.Is(err, tokenvault.ErrStorageFull) {
		t.Errorf("CreateToken on a full disk through the client = %v, want StorageFull", err)
	}
	var e *tokenvault.Error
	if errors.As(err, &e) && e.RetryAfter != time.Minute {
		t.Errorf("CreateToken on a full disk through the client: RetryAfter = %v, want a minute (the server's Retry-After)", e.RetryAfter)
	}
}
