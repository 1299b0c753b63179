package reactors

// The API types the records of this package hold; the root names each by
// an alias of the same name (tokenvault.Ref = reactors.Ref), so their
// JSON, which the API shows, is defined here.

// ConfigurationDeclaration declares one configuration name.
type ConfigurationDeclaration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is string, number or boolean.
	Type string `json:"type"`
}

// RequestParameter declares one argument of an invocation. A dotted name
// (a.b.c) addresses a nested property.
type RequestParameter struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is string, number or boolean; arguments are cast to it.
	Type     string `json:"type"`
	Optional bool   `json:"optional"`
}

// ProxyTransform is JavaScript that rewrites a request or a response:
// module.exports = async function (req) { return {body, headers} }.
type ProxyTransform struct {
	Code string `json:"code"`
}

// Ref names another resource by id.
type Ref struct {
	ID string `json:"id"`
}

// Value types of configuration declarations and request parameters; the
// root names each by a constant of the same name.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeBoolean = "boolean"
)
