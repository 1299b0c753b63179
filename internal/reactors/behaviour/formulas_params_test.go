package reactors_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestFormulaParametersMustNotOverlap: "card" and "card.number" cannot
// both be parameters (card is a value or an object), in either order;
// siblings can.
func TestFormulaParametersMustNotOverlap(t *testing.T) {
	e := vaulttest.NewEnv(t)
	for _, names := range [][2]string{{"card", "card.number"}, {"card.number", "card"}} {
		_, err := e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "f", Code: `module.exports = async () => ({})`,
			RequestParameters: []tokenvault.RequestParameter{{Name: names[0], Type: "string"}, {Name: names[1], Type: "string"}}})
		vaulttest.WantField(t, err, "request_parameters[1].name")
	}
	if _, err := e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "f", Code: `module.exports = async () => ({})`,
		RequestParameters: []tokenvault.RequestParameter{{Name: "card.number", Type: "string"}, {Name: "card.cvc", Type: "string"},
			{Name: "cardholder", Type: "string"}}}); err != nil {
		t.Errorf("siblings and a name sharing a prefix: %v", err)
	}
}
