package budget

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Cost is an amount of US dollars in picodollars (10⁻¹² USD). Prices have at
// most six decimals per million tokens, so a price times a number of tokens
// is a whole number of picodollars: sums are exact, never rounded, and
// nothing is ever a float. The largest Cost is about 9.2 million dollars.
type Cost int64

// Units of Cost.
const (
	Picodollar  Cost = 1
	Microdollar Cost = 1_000_000
	Cent        Cost = 10_000 * Microdollar
	Dollar      Cost = 100 * Cent
)

// maxDecimals is the precision of a price or a limit written in dollars:
// one microdollar.
const maxDecimals = 6

var errNotUSD = errors.New("not an amount of dollars")

// ParseUSD reads an amount of dollars written as a decimal number ("5",
// "0.25", "$1.10"), exactly: at most six decimals, never negative. It
// reads the text, never a float, so 0.1 is exactly ten cents.
func ParseUSD(s string) (Cost, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "$")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" {
		return 0, fmt.Errorf("%q: %w (a number such as 5 or 0.25)", s, errNotUSD)
	}
	if whole == "" {
		whole = "0"
	}
	if !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%q: %w (a number such as 5 or 0.25)", s, errNotUSD)
	}
	if len(frac) > maxDecimals {
		return 0, fmt.Errorf("%q: %w: at most %d decimals", s, errNotUSD, maxDecimals)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > int64(maxDollars) {
		return 0, fmt.Errorf("%q: %w: at most %d dollars", s, errNotUSD, maxDollars)
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", maxDecimals-len(frac)), 10, 64)
	}
	return Cost(w)*Dollar + Cost(f)*Microdollar, nil
}

// maxDollars bounds a parsed amount, far below Cost's range.
const maxDollars = 1_000_000

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// String shows c in dollars with at least two and at most six decimals,
// rounded half up at the sixth: "$5.00", "$0.001234".
func (c Cost) String() string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	micros := (c + Microdollar/2) / Microdollar
	w, f := micros/1_000_000, micros%1_000_000
	frac := strings.TrimRight(fmt.Sprintf("%06d", f), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s$%d.%s", sign, w, frac)
}

// Micros is c in whole microdollars, rounded down: what the API reports
// beside the text.
func (c Cost) Micros() int64 { return int64(c / Microdollar) }

// MarshalText writes c as ParseUSD reads it, without the dollar sign.
func (c Cost) MarshalText() ([]byte, error) {
	return []byte(strings.TrimPrefix(c.String(), "$")), nil
}

// UnmarshalText reads what ParseUSD reads.
func (c *Cost) UnmarshalText(b []byte) error {
	v, err := ParseUSD(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
