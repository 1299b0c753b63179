// Package subjects is the data subjects feature (docs/erasure.md): the
// key store of the subjects' data keys (KeyStore), which seal the Data
// and Mask of every token that names a subject (internal/tokens,
// Record.Subject); the erasure of a subject, which destroys its keys and
// removes its tokens, and its signed certificate (CertificateRecord,
// auditchain.ErasureCertificate); and the tokens of a subject, for its
// access report. The root's subjects.go authorizes, signs and wires it.
package subjects
