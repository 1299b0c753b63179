// Package reactors is the feature of tenant code: reactors, the formulas
// they are made from, and proxies. It holds, so far, their stored records
// (Record, FormulaRecord, ProxyRecord), each in its own encoding and with
// its format's history in its doc (golden fixtures in the root's
// testdata/records pin every version's bytes), and the API types those
// encodings hold (ConfigurationDeclaration, RequestParameter,
// ProxyTransform, Ref), which the root names by aliases so that nothing
// a user sees changed when they moved.
//
// The rest of the feature (managing and invoking reactors and proxies,
// the built-in formulas) is still in the root package and moves here
// next; this package never imports the root.
package reactors
