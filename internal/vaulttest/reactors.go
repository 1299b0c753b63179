package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// EchoCode returns what the code was given.
const EchoCode = `module.exports = async function (req) {
	return {raw: {args: req.args, configuration: req.configuration, hasClient: req.client !== null}};
};`

// Formula creates a formula from req with the bootstrap management key,
// named "formula" and running EchoCode unless req says otherwise.
func (e *Env) Formula(t *testing.T, req tokenvault.FormulaRequest) *tokenvault.Formula {
	t.Helper()
	if req.Name == "" {
		req.Name = "formula"
	}
	if req.Code == "" {
		req.Code = EchoCode
	}
	f, err := e.V.CreateFormula(ctx, e.Mgmt, req)
	if err != nil {
		t.Fatalf("CreateFormula: %v", err)
	}
	return f
}

// Reactor creates a reactor from req with the bootstrap management key,
// named "reactor" unless req says otherwise.
func (e *Env) Reactor(t *testing.T, req tokenvault.CreateReactorRequest) *tokenvault.Reactor {
	t.Helper()
	if req.Name == "" {
		req.Name = "reactor"
	}
	r, err := e.V.CreateReactor(ctx, e.Mgmt, req)
	if err != nil {
		t.Fatalf("CreateReactor: %v", err)
	}
	return r
}

// User creates a private application that may use (and read) every token.
func (e *Env) User(t *testing.T) tokenvault.Credential {
	t.Helper()
	return e.Reader(t, "reveal", "token:use", "token:read", "token:create").Key
}
