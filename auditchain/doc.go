// Package auditchain is the format of a Token Vault's verifiable audit
// trail: how each tenant's log lines are hash-chained, how the chain's
// head is signed in checkpoints, and how a copy of the trail is verified
// without the vault. It imports nothing of the vault, so a SIEM pipeline,
// an auditor's tool or a test can verify an export with this package
// alone; docs/audit-chain.md in the repository describes the same format
// for verifiers written in other languages.
//
// # The chain
//
// Each tenant's lines form one chain. The line with sequence number seq
// (1, 2, 3, ... in the order the vault linked them) has the hash
//
//	hash(seq) = SHA-256(line bytes)
//
// where the line bytes are, in this order:
//
//	u32 len, "tokenvault.audit.line/v1"   the domain
//	u64 seq
//	32  prev: hash(seq-1), or 32 zero bytes for seq 1
//	i64 created_at as Unix nanoseconds
//	then 11 strings, each u32 length then UTF-8 bytes:
//	tenant_id, id, actor_id, actor_type, entity_type, entity_id,
//	operation, message, transform, channel, application
//	and, only on a line that names a purpose of access, a 12th: purpose
//
// with every integer big-endian. So a line's hash commits to its content,
// its position and, through prev, to every line before it: altering,
// removing, reordering or inserting a line breaks the link of the line
// after it.
//
// # What the order is, and how soon a line is on the chain
//
// The vault links lines beside the commits that write them: a commit
// queues its line, and one linker for the whole store (the holder of a
// lease, whichever instance that is) links queued lines in batches. The
// chain's order is the order the linker found them in: commit order on one
// instance, and across instances the order of their clocks at write time
// (up to a line committed behind a batch, linked in the next); it is not a
// total order of the commits of several instances. A line is linked
// within a quarter of a second of its commit under normal load, and within
// the linker's lease (10 s by default) when the linker's process dies. A
// verification from the vault's store reports the lines committed and not
// yet linked apart ([Report].Unlinked): what it proves is that every line
// linked so far is there, unaltered, in order, with nothing inserted.
//
// # Checkpoints
//
// A checkpoint signs a chain head with an Ed25519 key of the vault. The
// signed bytes are
//
//	u32 len, "tokenvault.audit.checkpoint/v1"
//	u32 len, tenant_id
//	u64 seq          the last line the checkpoint covers
//	32  hash(seq)
//	i64 created_at as Unix nanoseconds
//	u32 len, key_id
//	u8  1 if final (the tenant was deleted: no line follows), else 0
//
// and the key id is the first 8 bytes of SHA-256 of the 32-byte public
// key, in lower-case hex ([KeyID]). A checkpoint at seq S vouches for
// every line up to S: whoever holds a copy of the lines up to S and the
// public key can recompute hash(S) and check the signature. Lines after
// the last checkpoint are the chain's unsigned tail.
//
// # The export
//
// An export holds one JSON event a line (LineSchema, CheckpointSchema),
// each in its canonical form: the bytes encoding/json's Marshal writes for
// the event, which ReadExport requires byte for byte (ErrNotCanonical
// otherwise). A line with a key twice, a key in another case, a key the
// format does not have, or any other encoding of its event is refused, so
// that what the verifier hashes is exactly what any JSON reader of the
// line sees.
package auditchain
