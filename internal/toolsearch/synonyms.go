package toolsearch

import (
	"strings"

	"github.com/shelldon/shelldon/internal/lazy"
)

// synonymWeight is the weight of a term a query gains through synonyms,
// relative to the query's own terms.
const synonymWeight = 0.5

// synonyms maps a query term to terms tools more often use for the same
// thing; a query is expanded with them (at synonymWeight). Keys and values
// are words, stemmed when the table is built. The table is small and
// general on purpose: it bridges everyday words and the vocabulary of tool
// names, it is not a thesaurus. Like every table of the package it is
// built on first use, so a daemon that never ranks never builds it.
func synonyms() map[string][]string {
	return synonymsOnce.Get(func() map[string][]string {
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
			checksum digest: hash
			`+vocabularyBridge, "\n") {
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
	})
}

var synonymsOnce lazy.Value[map[string][]string]

// vocabularyBridge continues the synonyms table with everyday words for
// the verbs and objects that tool names use, written from the vocabulary
// of tool names (a value is a name word; the keys are what a person says
// instead), from general English, not from the requests of the labeled
// sets.
const vocabularyBridge = `
		change transform turn: convert
		tally: count
		pull grab: extract
		strip drop clear: remove
		locate search: find
		enumerate: list
		summary overview recap: summarize
		retrieve download lookup: fetch
		monitor track alert notify follow: watch
		record: log
		create insert save new: add
		post notify: send
		plan later: schedule
		switch start enable activate: on
		stop disable deactivate: off
		state: status
		random: generate
		compute work figure: calculate
		check verify correct: validate
		shrink reduce: compress
		enlarge scale: resize
		combine join concatenate: merge
		divide separate: split
		backup dump download: export
		pack backup: archive
		unzip unpack decompress: extract
		compare difference: diff
		format beautify indent: pretty
		compact: minify
		mark emphasize: highlight
		order arrange rank: sort
		select keep only where: filter
		last end latest: tail
		fingerprint: hash
		grep: search
		document doc: file
		dir: folder
		address: url email
		headline story stories: news
		share ticker: stock
		coin token: crypto
		lamp light: lights
		television: tv
		purchase bought paid: expense
		task: todo
		remind: reminder
		exercise run gym training: workout
		food ate eat lunch dinner breakfast: meal
		medicine pill meds drug: medication
		slept: sleep
		feel feeling: mood
		drank drink: water
		event: appointment meeting
		forecast rain temperature: weather
		repository repo: git
		commit: commits
		author: contributors
		program source: code
		dimension size: dimensions
		length long: duration
		loudness loud quiet: volume
		clip cut shorten: trim
		spelling typo: spell
		language: translate
		birthday born: age
		space free: disk
		ram: memory
		processor: cpu
		charge: battery
		network internet: wifi
		server site: host
		certificate cert https: ssl
		port: ports
		phrase: passphrase
		identifier id: uuid
		dice die: roll
		heads tails: coin
		unique distinct different: unique distinct
		biggest highest largest maximum top: max
		smallest lowest minimum bottom: min
		middle: median
		typical: mean average
		often frequent common: frequency
		`

// aliases writes out abbreviations and spelling variants of units,
// currencies and file formats, and British spellings, on both sides (tools
// and queries), before stemming. They are general knowledge (what "kg" or
// "£" stands for), not words picked from the labeled requests.
func aliases() map[string][]string {
	return aliasesOnce.Get(func() map[string][]string {
		return byVariant(`
			usd: dollar dollars buck bucks
			eur: euro euros
			gbp: sterling quid
			jpy: yen
			chf: franc francs
			cny: yuan renminbi rmb
			kilogram: kg kgs kilo kilos
			pound: lb lbs
			ounce: oz
			gram: gr grams
			kilometer: km kms kilometre kilometres
			meter: metre metres
			centimeter: cm cms centimetre centimetres
			millimeter: mm millimetre millimetres
			feet: ft foot
			mile: mi
			yard: yd yds
			milliliter: ml millilitre millilitres
			liter: ltr litre litres
			gallon: gal gals
			tablespoon: tbsp tbs
			teaspoon: tsp
			kmh: kph
			kilobyte: kb kib
			megabyte: mb mib
			gigabyte: gb gib
			jpeg: jpg
			yaml: yml
			html: htm
			tiff: tif
			tar gz: tgz tarball
			seven zip: 7z
			color: colour
			gray: grey
			grayscale: greyscale
			javascript: js`)
	})
}

var aliasesOnce lazy.Value[map[string][]string]

// extensions are the formats that file name extensions stand for, where
// the extension is not the format's name: "deploy.sh" is a shell script,
// "notes.md" Markdown. Only a word right after a dot ("x.md", ".md") is
// read as an extension; many of them are ordinary words or abbreviations
// of something else on their own ("md", "go"). General knowledge, like
// the aliases.
func extensions() map[string][]string {
	return extensionsOnce.Get(func() map[string][]string {
		return byVariant(`
			markdown: md mkd
			shell: sh bash zsh
			javascript: mjs cjs jsx
			typescript: ts tsx
			python: py
			rust: rs
			ruby: rb
			sqlite: db sqlite3
			text: txt
			jsonl: ndjson`)
	})
}

var extensionsOnce lazy.Value[map[string][]string]

// unitForms joins units written with a slash into the one word tools use.
func unitForms() *strings.Replacer {
	return unitFormsOnce.Get(func() *strings.Replacer {
		return strings.NewReplacer("km/h", " kmh ", "KM/H", " kmh ", "Km/h", " kmh ")
	})
}

var unitFormsOnce lazy.Value[*strings.Replacer]

// currencyCode is the ISO code tools use for a currency sign.
func currencyCode(r rune) (string, bool) {
	switch r {
	case '$':
		return "usd", true
	case '€':
		return "eur", true
	case '£':
		return "gbp", true
	case '¥':
		return "jpy", true
	}
	return "", false
}

// timeUnit is the unit of time an abbreviation names after a number
// ("15 min", "2h"); on its own "min" is as often a minimum.
func timeUnit(s string) (string, bool) {
	switch s {
	case "h", "hr", "hrs":
		return "hour", true
	case "min", "mins":
		return "minute", true
	case "sec", "secs":
		return "second", true
	}
	return "", false
}

// degreeScale is the temperature scale a letter names after a degree sign
// (C, F, K) or a number (C, F: "30C", "451 F"; a K there is a thousand).
func degreeScale(s string) (string, bool) {
	switch s {
	case "c":
		return "celsius", true
	case "f":
		return "fahrenheit", true
	case "k":
		return "kelvin", true
	}
	return "", false
}

// phrases are everyday multi-word expressions whose words say little one
// by one (most are stop words) and the name word they mean; a query
// containing one gains the word at synonymWeight.
func phrases() []phrase {
	return phrasesOnce.Get(func() []phrase {
		var out []phrase
		for _, line := range strings.Split(`
			how many: count
			how long: duration
			how old: age
			black and white: grayscale
			pull out: extract
			take out: remove
			get rid of: remove
			keep an eye on: watch
			let me know: watch
			look up: fetch
			turn into: convert`, "\n") {
			p, term, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			out = append(out, phrase{" " + strings.TrimSpace(p) + " ", Stem(strings.TrimSpace(term))})
		}
		return out
	})
}

var phrasesOnce lazy.Value[[]phrase]

// phrase is " words " (spaced, to match whole words) and its term.
type phrase struct{ words, term string }

// byVariant reads a table of lines "canonical words: variant variant..."
// into a map from each variant to the canonical words.
func byVariant(table string) map[string][]string {
	m := map[string][]string{}
	for line := range strings.SplitSeq(table, "\n") {
		canon, variants, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for _, v := range strings.Fields(variants) {
			m[v] = strings.Fields(canon)
		}
	}
	return m
}
