package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// approvalRoutes serve approvals for dangerous operations (tokenvault's
// approvals.go): the tenant's policy, and its pending changes. An
// operation the policy holds to approval answers 202 with its pending
// change (writeError, pendingChange).
func (a *api) approvalRoutes() {
	a.handle("GET /tenants/self/approval-policy", a.getApprovalPolicy)
	a.handle("PUT /tenants/self/approval-policy", a.setApprovalPolicy)
	a.handle("GET /approvals", a.listApprovals, list("status")...)
	a.handle("GET /approvals/{id}", a.getApproval)
	a.handle("POST /approvals/{id}/approve", a.approveChange)
	a.handle("POST /approvals/{id}/reject", a.rejectChange)
}

// pendingChange is the body of a 202: the pending change, and the key
// the requester's application will have once it is applied.
type pendingChange struct {
	*tokenvault.PendingChange
	Key tokenvault.Credential `json:"key,omitempty"`
}

func (a *api) getApprovalPolicy(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetApprovalPolicy(r.Context(), apiKey(r))
	a.reply(w, r, out, err)
}

// approvalPolicyRequest is the body of PUT /tenants/self/approval-policy:
// the policy without what the Vault sets.
type approvalPolicyRequest struct {
	Required   int      `json:"required"`
	Approvers  []string `json:"approvers"`
	Operations []string `json:"operations"`
	TTLSeconds int      `json:"ttl_seconds"`
	// DetokenizeOver: with token.detokenize_bulk held.
	DetokenizeOver int `json:"detokenize_over"`
}

func (a *api) setApprovalPolicy(w http.ResponseWriter, r *http.Request) {
	var req approvalPolicyRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.SetApprovalPolicy(r.Context(), apiKey(r), tokenvault.ApprovalPolicy{Required: req.Required,
		Approvers: req.Approvers, Operations: req.Operations, TTLSeconds: req.TTLSeconds, DetokenizeOver: req.DetokenizeOver})
	a.reply(w, r, out, err)
}

func (a *api) listApprovals(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListApprovals(r.Context(), apiKey(r), tokenvault.ListApprovalsRequest{Status: r.URL.Query().Get("status"), PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) getApproval(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetApproval(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) approveChange(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.ApproveChange(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

// rejectRequest is the optional body of POST /approvals/{id}/reject.
type rejectRequest struct {
	Reason string `json:"reason"`
}

func (a *api) rejectChange(w http.ResponseWriter, r *http.Request) {
	var req rejectRequest
	if r.ContentLength != 0 {
		if err := a.decodeJSON(w, r, &req); err != nil {
			a.writeError(w, r, err)
			return
		}
	}
	out, err := a.v.RejectChange(r.Context(), apiKey(r), r.PathValue("id"), req.Reason)
	a.reply(w, r, out, err)
}
