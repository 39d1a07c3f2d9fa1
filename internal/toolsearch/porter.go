package toolsearch

// Stem reduces a lowercase English word to its stem with the Porter
// stemming algorithm (M. F. Porter, "An algorithm for suffix stripping",
// 1980, as in his reference C implementation, which adds "bli" -> "ble"
// and "logi" -> "log" to step 2), so that forms of a word meet:
// "converted", "converter" and "converts" become "convert"; "valid" and
// "validate" become "valid"; "readable" becomes "readabl"... It is the
// standard, published algorithm, chosen rather than a table of suffixes
// grown to fit the labeled requests. Words with a non-ASCII letter and
// words of two letters or fewer are returned unchanged.
func Stem(w string) string {
	if len(w) <= 2 || !isLowerASCII(w) {
		return w
	}
	var buf [32]byte
	p := porter{b: append(buf[:0], w...)}
	p.k = len(p.b) - 1
	p.step1ab()
	if p.k > 0 {
		p.step1c()
		p.step2()
		p.step3()
		p.step4()
		p.step5()
	}
	if s := p.b[:p.k+1]; len(s) <= len(w) && string(s) == w[:len(s)] {
		return w[:len(s)] // only a suffix went: no new string
	}
	return string(p.b[:p.k+1])
}

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// porter is the state of the algorithm: the word is b[:k+1], and j marks
// the end of the stem before a suffix that ends matched.
type porter struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant: not a vowel, and a y only
// when it does not follow a consonant.
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m is the number of vowel-consonant sequences in b[:j+1].
func (p *porter) m() int {
	n, i := 0, 0
	for ; i <= p.j && p.cons(i); i++ {
	}
	for i <= p.j {
		for ; i <= p.j && !p.cons(i); i++ {
		}
		if i > p.j {
			break
		}
		n++
		for ; i <= p.j && p.cons(i); i++ {
		}
	}
	return n
}

// vowelInStem reports whether b[:j+1] contains a vowel.
func (p *porter) vowelInStem() bool {
	for i := 0; i <= p.j; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[i-1:i+1] is a double consonant.
func (p *porter) doublec(i int) bool {
	return i >= 1 && p.b[i] == p.b[i-1] && p.cons(i)
}

// cvc reports whether b[i-2:i+1] is consonant-vowel-consonant with the
// last not w, x or y: the stem of a short word like hop(e) or fil(e).
func (p *porter) cvc(i int) bool {
	if i < 2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	c := p.b[i]
	return c != 'w' && c != 'x' && c != 'y'
}

// ends reports whether the word ends with s, setting j before it.
func (p *porter) ends(s string) bool {
	n := len(s)
	if n > p.k+1 || s[n-1] != p.b[p.k] || string(p.b[p.k+1-n:p.k+1]) != s {
		return false
	}
	p.j = p.k - n
	return true
}

// setto replaces the suffix after j with s.
func (p *porter) setto(s string) {
	p.b = append(p.b[:p.j+1], s...)
	p.k = p.j + len(s)
}

// r replaces the suffix with s when the stem has m > 0.
func (p *porter) r(s string) {
	if p.m() > 0 {
		p.setto(s)
	}
}

// step1ab removes plurals and -ed or -ing.
func (p *porter) step1ab() {
	if p.b[p.k] == 's' {
		switch {
		case p.ends("sses"):
			p.k -= 2
		case p.ends("ies"):
			p.setto("i")
		case p.k >= 1 && p.b[p.k-1] != 's':
			p.k--
		}
	}
	if p.ends("eed") {
		if p.m() > 0 {
			p.k--
		}
		return
	}
	if (p.ends("ed") || p.ends("ing")) && p.vowelInStem() {
		p.k = p.j
		switch {
		case p.ends("at"):
			p.setto("ate")
		case p.ends("bl"):
			p.setto("ble")
		case p.ends("iz"):
			p.setto("ize")
		case p.doublec(p.k):
			if c := p.b[p.k]; c != 'l' && c != 's' && c != 'z' {
				p.k--
			}
		default:
			p.j = p.k
			if p.m() == 1 && p.cvc(p.k) {
				p.setto("e")
			}
		}
	}
}

// step1c turns a final y into i when there is another vowel in the stem.
func (p *porter) step1c() {
	if p.ends("y") && p.vowelInStem() {
		p.b[p.k] = 'i'
	}
}

// suffixRule is one rule of steps 2 to 4: a suffix and its replacement.
type suffixRule struct{ suffix, repl string }

var step2Rules = []suffixRule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"},
	{"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"},
	{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}, {"logi", "log"},
}

var step3Rules = []suffixRule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"},
	{"ful", ""}, {"ness", ""},
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

// applyFirst applies the first rule whose suffix the word ends with (only
// that one is tried, as in the reference implementation).
func (p *porter) applyFirst(rules []suffixRule) {
	for _, rl := range rules {
		if p.ends(rl.suffix) {
			p.r(rl.repl)
			return
		}
	}
}

// step2 maps double suffixes to single ones: -ization to -ize and so on.
func (p *porter) step2() {
	if p.k >= 1 {
		p.applyFirst(step2Rules)
	}
}

// step3 handles -ic-, -full, -ness and the like.
func (p *porter) step3() { p.applyFirst(step3Rules) }

// step4 takes off -ant, -ence and the like when the stem has m > 1.
func (p *porter) step4() {
	if p.k < 1 {
		return
	}
	for _, s := range step4Suffixes {
		if !p.ends(s) {
			continue
		}
		if s == "ion" && (p.j < 0 || p.b[p.j] != 's' && p.b[p.j] != 't') {
			return
		}
		if p.m() > 1 {
			p.k = p.j
		}
		return
	}
}

// step5 removes a final -e when m > 1 (or m = 1 and not cvc) and turns a
// final -ll into -l when m > 1.
func (p *porter) step5() {
	p.j = p.k
	if p.b[p.k] == 'e' {
		a := p.m()
		if a > 1 || a == 1 && !p.cvc(p.k-1) {
			p.k--
		}
	}
	if p.b[p.k] == 'l' && p.doublec(p.k) && p.m() > 1 {
		p.k--
	}
}
