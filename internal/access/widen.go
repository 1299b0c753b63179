package access

import (
	"encoding/json"
	"slices"
	"time"
)

// WidenedBy reports whether replacing r's grants with g may let the
// application reveal or do more: the widened grants an approval policy
// holds (internal/approvals). Conservatively:
//   - a permission r does not hold;
//   - any change to the rules (a rule removed can unmask what another
//     masked);
//   - a looser reveal budget (LoosensBudget).
//
// Dropping permissions, tightening the budget or renaming is not.
func (r *ApplicationRecord) WidenedBy(g Grant) bool {
	for _, perm := range g.Permissions {
		if !slices.Contains(r.Permissions, perm) {
			return true
		}
	}
	a, _ := json.Marshal(SortedRules(r.Rules))
	b, _ := json.Marshal(SortedRules(g.Rules))
	return string(a) != string(b) || LoosensBudget(r.RevealBudget, g.RevealBudget)
}

// LoosensBudget reports whether an update's reveal budget req (nil: kept)
// lets the application reveal more than old does: it removes the budget,
// allows more tokens or a shorter window, masks where old refused, or no
// longer freezes. A budget whose window does not parse is not one: the
// update itself refuses it (Invalid).
func LoosensBudget(old, req *RevealBudget) bool {
	if req == nil || old == nil {
		return false // kept, or a first budget: only ever tighter
	}
	if req.Tokens == 0 {
		return true
	}
	window, err := time.ParseDuration(req.Window)
	if err != nil {
		return false
	}
	return req.Tokens > old.Tokens || window < old.Duration() ||
		old.Refuses() && req.Action != BudgetRefuse || old.Freeze && !req.Freeze
}
