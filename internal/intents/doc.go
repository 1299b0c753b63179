// Package intents is the feature of token intents: validated data a
// public application collects, held briefly until a private one converts
// it into a token. It holds, so far, the intent's stored record (Record,
// with its format in its doc; golden fixtures in the root's
// testdata/records pin its bytes) and what a record says of itself
// (Expired, IndexKeys).
//
// The rest of the feature (creating, reading, converting and sweeping
// intents, their caps) is still in the root package and moves here next;
// this package never imports the root.
package intents
