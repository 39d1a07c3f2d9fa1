package selftools

import "encoding/json"

// paramsOf is a tool's parameter schema as sent to the model; a missing one
// (the gate requires one) becomes an empty object schema.
func paramsOf(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return raw
}
