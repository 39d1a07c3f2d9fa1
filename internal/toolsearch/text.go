package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/lazy"
)

// Terms splits text into index terms: runs of letters and digits, split
// again at snake_case underscores and camelCase humps, lowercased, with
// spelling variants and abbreviations of units, currencies and file
// formats written out (aliases: "kg" is "kilogram", "$" is "usd", "°C" is
// "celsius", "yml" is "yaml"), a number before a unit dropped ("5kg" is
// "kilogram"), a file name's extension followed by the format it names
// ("deploy.sh": "sh", "shell"), a hyphenated compound followed by itself
// as one term ("check-in": "check", "check-in"), stemmed (Stem), without
// stop words, numbers or one-letter words. Tools and queries go through the same function, so their terms
// meet.
func Terms(text string) []string {
	var out []string
	appendTerms(text, nil, func(t string) { out = append(out, t) })
	return out
}

// appendTerms calls emit with each term of text in order. Build passes a
// stems cache (a toolbox repeats its words); a query passes nil.
func appendTerms(text string, st stems, emit func(string)) {
	if strings.IndexByte(text, '/') >= 0 {
		text = unitForms().Replace(text)
	}
	word := make([]rune, 0, 32)
	var lower []byte
	last := make([]byte, 0, 32) // the previous word, lowercase
	afterNumber := false
	// sep is the separator just before the word being read: '.' (a file
	// name's extension follows), '-' (a compound's second part follows)
	// or 0 for any other.
	var sep, wordSep rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		lower = lower[:0]
		for _, r := range word {
			lower = utf8.AppendRune(lower, unicode.ToLower(r))
		}
		word = word[:0]
		w := string(lower)
		// A lone C or F after a number is a temperature: "451 F"; a
		// "min" or "h" a time: "15 min".
		if scale, ok := degreeScale(w); ok && afterNumber && w != "k" {
			w = scale
		} else if unit, ok := timeUnit(w); ok && afterNumber {
			w = unit
		}
		afterNumber = allDigits(w)
		emitWord(w, st, emit)
		switch {
		case wordSep == '.':
			// "deploy.sh", ".md": the format the extension names.
			for _, f := range extensions()[w] {
				emitWord1(f, st, emit)
			}
		case wordSep == '-' && len(last) > 0 && !afterNumber && !allDigits(string(last)):
			// "check-in", "e-book": the compound as a term of its own,
			// which meets the same compound and not its parts' other
			// uses; one with a one-letter first part (no term) as the
			// one word it is often written as ("ebook").
			if len(last) == 1 {
				emitWord1(string(last)+w, st, emit)
			} else {
				emitWord1(string(last)+"-"+w, st, emit)
			}
		}
		last = append(last[:0], lower...)
	}
	var prev rune
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// A lower-to-upper change starts a new word (camelCase).
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
				sep = 0
			}
			if len(word) == 0 {
				wordSep, sep = sep, 0
			}
			word = append(word, r)
		case r == '°':
			// °C, °F, °K: a temperature scale.
			flush()
			sep = 0
			next, m := utf8.DecodeRuneInString(text[i:])
			after, _ := utf8.DecodeRuneInString(text[i+m:])
			if m > 0 && !unicode.IsLetter(after) {
				if scale, ok := degreeScale(string(unicode.ToLower(next))); ok {
					emitWord(scale, st, emit)
					i += m
				}
			}
		default: // '_' and everything else separate words
			flush()
			sep = 0
			if r == '.' && prev != '.' || r == '-' && unicode.IsLetter(prev) {
				sep = r
			}
			if code, ok := currencyCode(r); ok {
				emitWord(code, st, emit)
			}
		}
		prev = r
	}
	flush()
}

// emitWord emits the term of one lowercase word, or of the words its
// alias stands for.
func emitWord(w string, st stems, emit func(string)) {
	if a, ok := aliases()[w]; ok {
		for _, x := range a {
			emitWord1(x, st, emit)
		}
		return
	}
	// A number with a unit ("5kg", "800px", "4th"): the unit.
	if i := strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }); i > 0 {
		if scale, ok := degreeScale(w[i:]); ok && w[i:] != "k" {
			emitWord1(scale, st, emit) // "30C"
		} else if unit, ok := timeUnit(w[i:]); ok {
			emitWord1(unit, st, emit) // "15min"
		} else {
			emitWord(w[i:], st, emit)
		}
		return
	}
	emitWord1(w, st, emit)
}

func emitWord1(w string, st stems, emit func(string)) {
	if s := st.term(w); s != "" {
		emit(s)
	}
}

// term is the term of one word, "" if it has none: a stop word, a number,
// a single letter.
func term(w string) string {
	if len(w) < 2 || allDigits(w) || stopWords()[w] {
		return ""
	}
	s := Stem(w)
	if stopWords()[s] {
		return ""
	}
	return s
}

// stems caches term (so Stem); a nil stems does not cache.
type stems map[string]string

func (st stems) term(w string) string {
	if st == nil {
		return term(w)
	}
	s, ok := st[w]
	if !ok {
		s = term(w)
		st[w] = s
	}
	return s
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// stopWords are words that say nothing about which tool is meant: articles,
// pronouns, auxiliaries, prepositions and the politeness of a request.
func stopWords() map[string]bool {
	return stopWordsOnce.Get(func() map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(`
			a an the and or but if then else of to in on at by for with from into onto
			about as over under than so too very just also only not no yes
			i me my mine we us our you your yours he him his she her it its they them their
			this that these those there here what which who whom whose when where why how
			is am are was were be been being do does did done have has had having
			can could will would shall should may might must
			please thanks thank hi hello hey ok okay want need like let lets get got give tell
			some any all each every much many more most few lot
			one thing something anything stuff way kind sort
			s t d ll re ve m am pm st nd rd th`) {
			m[w] = true
		}
		return m
	})
}

var stopWordsOnce lazy.Value[map[string]bool]
