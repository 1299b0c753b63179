// Package precommit keeps the parts that Update functions add to the
// writes done once per store transaction (store.PreCommit), for the
// stores of this module.
package precommit

import "github.com/tokenvault/tokenvault/store"

// Parts is what one function, or the functions of one transaction that
// have succeeded so far, added. The zero value is empty.
type Parts struct {
	writes []store.PreCommitWrite
	parts  map[store.PreCommitWrite][]any
}

// Add adds part to w's write.
func (p *Parts) Add(w store.PreCommitWrite, part any) {
	if p.parts == nil {
		p.parts = map[store.PreCommitWrite][]any{}
	}
	if _, ok := p.parts[w]; !ok {
		p.writes = append(p.writes, w)
	}
	p.parts[w] = append(p.parts[w], part)
}

// Merge moves what q holds (a function that succeeded) into p, and
// empties q.
func (p *Parts) Merge(q *Parts) {
	for _, w := range q.writes {
		for _, part := range q.parts[w] {
			p.Add(w, part)
		}
	}
	q.Reset()
}

// Reset drops everything: a function that failed, an attempt run again.
func (p *Parts) Reset() { p.writes, p.parts = nil, nil }

// Write does every write once, with its parts, in the order of their
// first parts, and empties p.
func (p *Parts) Write(tx store.Tx) error {
	writes, parts := p.writes, p.parts
	p.Reset()
	for _, w := range writes {
		if err := w.WritePreCommit(tx, parts[w]); err != nil {
			return err
		}
	}
	return nil
}
