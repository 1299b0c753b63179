package openapitest

import "github.com/getkin/kin-openapi/openapi3filter"

// An NDJSON body (POST /tokens/import) is checked as the document types
// it: a string; its lines are the handler's to judge.
func init() {
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
}
