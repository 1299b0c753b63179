package tokenvault

import "github.com/tokenvault/tokenvault/internal/access"

// The access rule engine is access.Decide; these names keep the root's
// call sites as they were.

// tokenScope is what access rules look at on a token: its id and its
// containers.
type tokenScope = access.TokenScope

// Condition attributes and operators, for session rules.
const (
	AttributeID        = access.AttributeID
	AttributeContainer = access.AttributeContainer
	OperatorEquals     = access.OperatorEquals
	OperatorStartsWith = access.OperatorStartsWith
)

// containerContains reports whether container outer contains inner
// (access.ContainerContains).
func containerContains(outer, inner string) bool { return access.ContainerContains(outer, inner) }

// sortedRules returns rules in ascending priority (access.SortedRules).
func sortedRules(rules []AccessRule) []AccessRule { return access.SortedRules(rules) }
