package risky

import (
	"context"
	"encoding/json"
	"fmt"
)

// decodeCheck makes a Tool.Check from a check on the typed arguments.
func decodeCheck[In any](check func(In) error) func(context.Context, json.RawMessage) error {
	return func(_ context.Context, raw json.RawMessage) error {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return fmt.Errorf("arguments do not fit the schema: %v", err)
		}
		return check(in)
	}
}
