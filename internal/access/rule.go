package access

import (
	"encoding/binary"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// ApplicationType is private, public or management (the root names it
// tokenvault.ApplicationType, with its constants).
type ApplicationType string

// Rule grants permissions on the tokens in a container (applications)
// or on the tokens matching conditions (sessions), with a transform applied
// to the data of token responses. Rules are evaluated in ascending priority;
// the first that matches and grants the permission decides. The root
// names it tokenvault.AccessRule; its JSON is the API's.
type Rule struct {
	Description string      `json:"description,omitempty"`
	Priority    int         `json:"priority"`
	Container   string      `json:"container,omitempty"`
	Conditions  []Condition `json:"conditions,omitempty"`
	Transform   string      `json:"transform"`
	Permissions []string    `json:"permissions"`
	// Purposes, when set, limit the rule to calls that name one of them
	// (the caller's purpose of access, from the tenant's list): the rule
	// is passed over for a call with another purpose, and a call without
	// one that only such a rule would decide is refused (see DecideFor).
	// Several rules on one container, one per set of purposes, say which
	// purposes reveal and which only mask.
	Purposes []string `json:"purposes,omitempty"`
}

// Condition restricts a session's rule to tokens whose attribute (id or
// container) equals or starts with a value (tokenvault.Condition).
type Condition struct {
	Attribute string `json:"attribute"`
	Operator  string `json:"operator"`
	Value     string `json:"value"`
}

// AppendRules appends access rules as a list (the "rules" part of the
// records' shared parts: nil kept, and each rule's conditions and
// permissions as they are), for the records that hold rules of their own
// (sessions, formulas, reactors, proxies).
func AppendRules(b []byte, rules []Rule) []byte {
	b = unit.AppendList(b, len(rules), rules == nil)
	for i := range rules {
		rule := &rules[i]
		b = unit.AppendStr(b, rule.Description)
		b = binary.AppendVarint(b, int64(rule.Priority))
		b = unit.AppendStr(b, rule.Container)
		b = unit.AppendList(b, len(rule.Conditions), rule.Conditions == nil)
		for _, c := range rule.Conditions {
			b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, c.Attribute), c.Operator), c.Value)
		}
		b = unit.AppendStr(b, rule.Transform)
		b = unit.AppendStrs0(b, rule.Permissions)
	}
	return b
}

// ReadRules reads what AppendRules wrote.
func ReadRules(r *unit.Reader) []Rule {
	n := r.List()
	if n < 0 {
		return nil
	}
	rules := make([]Rule, n)
	for i := range rules {
		rule := &rules[i]
		rule.Description = r.Str()
		p := r.Varint()
		if int64(int(p)) != p {
			r.Fail("priority out of range")
		}
		rule.Priority = int(p)
		rule.Container = r.Str()
		if m := r.List(); m >= 0 {
			rule.Conditions = make([]Condition, m)
			for j := range rule.Conditions {
				c := &rule.Conditions[j]
				c.Attribute, c.Operator, c.Value = r.Str(), r.Str(), r.Str()
			}
		}
		rule.Transform = r.Str()
		rule.Permissions = r.Strs0()
		if r.Err() != nil {
			return nil
		}
	}
	return rules
}
