package toolsearch

import "strings"

// synonymWeight is the weight of a term a query gains through synonyms,
// relative to the query's own terms.
const synonymWeight = 0.5

// synonyms maps a query term to terms tools more often use for the same
// thing; a query is expanded with them (at synonymWeight). Keys and values
// are words, stemmed when the table is built. The table is small and
// general on purpose: it bridges everyday words and the vocabulary of tool
// names, it is not a thesaurus.
var synonyms = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(`
		picture photo pic: image
		link links website webpage site: url
		biggest largest huge big: large
		smallest tiny: small
		shrink scale smaller: resize
		readable beautify indent: pretty
		shopping groceries: grocery
		spend spent spending cost: expense
		bitcoin ethereum btc eth: crypto
		worth cost: price
		folder: directory
		directory: folder
		delete erase: remove
		show display: list
		total: sum
		average: mean
		mean: average
		weight: mass
		money: currency
		mail: email
		message text chat: message
		monochrome: grayscale
		checksum digest: hash`, "\n") {
		keys, vals, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for _, k := range strings.Fields(keys) {
			for _, v := range strings.Fields(vals) {
				m[Stem(k)] = append(m[Stem(k)], Stem(v))
			}
		}
	}
	return m
}()
