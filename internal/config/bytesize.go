package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ByteSize is a number of bytes written in configuration as a size:
// "512MiB", "1GiB", "100MB", "64k" or a plain number of bytes. Binary
// (KiB, MiB, GiB, TiB) and decimal (KB, MB, GB, TB) units are both
// understood; a bare K, M, G or T is binary.
type ByteSize uint64

var (
	_ yaml.Unmarshaler = (*ByteSize)(nil)
	_ yaml.Marshaler   = ByteSize(0)
)

// sizeUnits are the suffixes ParseByteSize accepts, lowercased.
var sizeUnits = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1000,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1000 * 1000 * 1000 * 1000,
}

// ParseByteSize parses a size such as "512MiB", "1.5GiB" or "4096".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%s is not a size (like \"512MiB\", \"1GiB\" or a number of bytes)", strconv.Quote(s))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s is not a size (like \"512MiB\", \"1GiB\" or a number of bytes)", strconv.Quote(s))
	}
	b := v * float64(mult)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("%s is too large", strconv.Quote(s))
	}
	return ByteSize(b), nil
}

// String writes b in the largest binary unit that divides it: "512MiB".
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		n    uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= ByteSize(u.n) && uint64(b)%u.n == 0 {
			return strconv.FormatUint(uint64(b)/u.n, 10) + u.name
		}
	}
	return strconv.FormatUint(uint64(b), 10)
}

// UnmarshalYAML accepts a scalar size.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("must be a size (like \"512MiB\" or \"1GiB\")")
	}
	return b.UnmarshalText([]byte(n.Value))
}

// MarshalYAML writes b as a size string.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// UnmarshalText parses a size; it serves JSON as well.
func (b *ByteSize) UnmarshalText(t []byte) error {
	v, err := ParseByteSize(string(t))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalText writes b as a size string.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }
