package selftools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaOf decodes a tool's parameter schema; a schema that does not decode
// (the gate checked it) becomes an empty object schema.
func schemaOf(raw json.RawMessage) *jsonschema.Schema {
	var s jsonschema.Schema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	return &s
}
