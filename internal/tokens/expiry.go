package tokens

import "github.com/tokenvault/tokenvault/internal/unit"

// ExpiryKind is the sweeper's handler of the tokens' schedule entries:
// an expired token is deleted as Delete deletes it, by the system.
func (s *Service) ExpiryKind() unit.ExpiryKind {
	return unit.ExpiryKind{Kind: Kind, Swept: "token", Expire: func(t *unit.Tx, tid, id string) (bool, error) {
		rec, err := s.Load(t, tid, id, true)
		if err != nil || rec == nil || !rec.Expired(t.Now) {
			return false, err
		}
		return true, s.Delete(t, unit.SystemActor, rec, "Token expired")
	}}
}
