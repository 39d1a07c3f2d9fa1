package skill

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"time"
)

// usageFile records, per skill name, how many times use_skill loaded it
// and when last (Used), for the catalog's choice when not every skill
// fits (see rank): {"daily-note": {"uses": 3, "last": "2025-01-02T03:04:05Z"}}.
// Bundled skills are counted alike. A leading dot keeps it out of every
// list; it is written whole to a temporary file renamed over it, so a
// crash leaves the old record or the new one. Two processes recording at
// once may lose one count: it is an order of preference, not an account.
// A record that cannot be read is started again.
const usageFile = ".usage.json"

// Bounds on the record: its bytes when read, and the names it keeps (the
// least lately used go first).
const (
	maxUsageBytes   = 256 << 10
	maxUsageEntries = 1000
)

// usage is one skill's record.
type usage struct {
	Uses int       `json:"uses"`
	Last time.Time `json:"last"`
}

// weight is the uses, each counting half as much every halfLife since the
// last one.
func (u usage) weight(now time.Time) float64 {
	if u.Uses <= 0 {
		return 0
	}
	age := max(now.Sub(u.Last), 0)
	return float64(u.Uses) * math.Exp2(-float64(age)/float64(halfLife))
}

// Used records that the skill name was loaded now (use_skill). It is not
// an error that the skill does not exist: the record of a name without a
// skill is never read.
func (l *Library) Used(name string) error {
	_, err := withRoot(l, name, func(r *os.Root) (struct{}, error) {
		use := readUsage(r)
		u := use[name]
		u.Uses++
		u.Last = l.now().UTC().Truncate(time.Second)
		use[name] = u
		if len(use) > maxUsageEntries {
			names := slices.SortedFunc(maps.Keys(use), func(a, b string) int { return use[a].Last.Compare(use[b].Last) })
			for _, n := range names[:len(use)-maxUsageEntries] {
				delete(use, n)
			}
		}
		data, err := json.MarshalIndent(use, "", " ")
		if err != nil {
			return struct{}{}, err
		}
		if err := replaceFile(r, usageFile, append(data, '\n')); err != nil {
			return struct{}{}, fmt.Errorf("skill %q: record its use: %w", name, err)
		}
		return struct{}{}, nil
	})
	return err
}

// usage reads the record of uses; empty when there is none or it cannot
// be read.
func (l *Library) usage() map[string]usage {
	r, err := l.root()
	if err != nil {
		return map[string]usage{}
	}
	defer r.Close()
	return readUsage(r)
}

// readUsage reads the record in r, without following a link; empty when
// there is none or it does not decode.
func readUsage(r *os.Root) map[string]usage {
	use := map[string]usage{}
	data, err := readFileNoLink(r, usageFile, sizeLimit{maxUsageBytes, usageFile})
	if err != nil || json.Unmarshal(data, &use) != nil {
		return map[string]usage{}
	}
	for name, u := range use {
		if ValidName(name) != nil || u.Uses <= 0 {
			delete(use, name)
		}
	}
	return use
}

// Uses returns how many times name was loaded and when last (zero when
// never), as the catalog's order counts them.
func (l *Library) Uses(name string) (int, time.Time) {
	u := l.usage()[name]
	return u.Uses, u.Last
}
