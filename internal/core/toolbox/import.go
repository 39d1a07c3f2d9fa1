package toolbox

import (
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// StageImport stages the current version of a bundle from another machine
// whose gate passed here (p, from the gate's report as a proposal's), with
// the record of where it came from (imp): the same checks and the same
// staging as Stage, so that the owner decides on it as on any proposal.
// The name must already be the tool's normalized name.
func (t *Toolbox) StageImport(p contracts.Proposal, imp selfcode.Import) (Staged, error) {
	if t.dir == nil {
		return Staged{}, ErrDisabled
	}
	name, err := selfcode.Normalize(p.Name)
	if err != nil {
		return Staged{}, err
	}
	if name != p.Name {
		return Staged{}, fmt.Errorf("%w: %q is not a normalized name", selfcode.ErrBadName, p.Name)
	}
	meta := selfcode.Meta{Description: p.Description, ParamsSchema: p.Parameters, Capabilities: p.Capabilities}
	m, err := t.dir.StageImported(name, p.Language, p.Code, p.Test, meta, p.Gate, imp)
	if err != nil {
		return Staged{}, err
	}
	return Staged{Manifest: m, Args: fmt.Sprintf(`{"name":%q,"version":%d}`, name, m.Version)}, nil
}
