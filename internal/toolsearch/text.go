package toolsearch

import (
	"strings"
	"unicode"
)

// Terms splits text into index terms: runs of letters and digits, split
// again at snake_case underscores and camelCase humps, lowercased, stemmed
// (Stem), without stop words, numbers or one-letter words. Tools and
// queries go through the same function, so their terms meet.
func Terms(text string) []string {
	var out []string
	appendTerms(text, func(t string) { out = append(out, t) })
	return out
}

// appendTerms calls emit with each term of text in order.
func appendTerms(text string, emit func(string)) {
	word := make([]rune, 0, 32)
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if len(w) < 2 || allDigits(w) || stopWords[w] {
			return
		}
		s := Stem(w)
		if stopWords[s] {
			return
		}
		emit(s)
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// A lower-to-upper change starts a new word (camelCase).
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			word = append(word, r)
		default: // '_' and everything else separate words
			flush()
		}
		prev = r
	}
	flush()
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Stem reduces a lowercase English word to a stem by stripping one common
// suffix, so that forms of a word meet: a plural -s (-ies becomes -y), then
// one of -ing, -ed, -er, -ly (a doubled final consonant left behind is
// undoubled), then a final -e. A stem keeps at least three letters. It is
// deliberately small: "converted", "converter" and "converts" all become
// "convert", "parse", "parsed" and "parsing" become "pars"; "conversion"
// does not meet "convert".
func Stem(w string) string {
	if !isASCII(w) {
		return w
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") &&
		!strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range [...]string{"ing", "ed", "er", "ly"} {
		if len(w)-len(suf) >= 3 && strings.HasSuffix(w, suf) {
			w = w[:len(w)-len(suf)]
			if n := len(w); n >= 4 && w[n-1] == w[n-2] && isConsonant(w[n-1]) && !strings.ContainsRune("lsz", rune(w[n-1])) {
				w = w[:n-1]
			}
			break
		}
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isConsonant(c byte) bool {
	return c >= 'a' && c <= 'z' && !strings.ContainsRune("aeiouy", rune(c))
}

// stopWords are words that say nothing about which tool is meant: articles,
// pronouns, auxiliaries, prepositions and the politeness of a request.
var stopWords = func() map[string]bool {
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
		s t d ll re ve m`) {
		m[w] = true
	}
	return m
}()
