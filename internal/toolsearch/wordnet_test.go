package toolsearch

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The related-terms table (related.txt, see related.go) is derived from
// WordNet 3.0 (Princeton University; licence in WORDNET-LICENSE) by
// TestRelatedTable: run
//
//	go test -run TestRelatedTable -update-related ./internal/toolsearch
//
// with Debian's wordnet-base installed (/usr/share/wordnet). Without the
// flag the test regenerates the table and fails if related.txt differs
// (as after a change to Stem or the stop words); without WordNet it skips.
var (
	updateRelated = flag.Bool("update-related", false, "rewrite related.txt from WordNet")
	wordnetDir    = flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory")
)

// What of WordNet the table takes. A word's senses are ordered by their
// frequency in the SemCor corpus; rare senses mostly add noise.
const (
	// relSenses is the most senses of a word (per part of speech) read:
	// the first always, the next ones only if SemCor tagged them.
	relSenses = 2
	// relMaxWords skips synsets of more single words than this (phrases
	// are not counted, the table has none): large synsets are loose.
	relMaxWords = 6
)

type wnPointer struct {
	sym      string
	pos      byte
	off      string
	src, tgt int // 1-based word numbers; 0 0: the whole synset
}

type wnSynset struct {
	words []string
	ptrs  []wnPointer
}

// readWordNet reads the synsets of one part of speech (noun, verb, adj,
// adv) keyed by their offset.
func readWordNet(dir, pos string) (map[string]*wnSynset, error) {
	f, err := os.Open(filepath.Join(dir, "data."+pos))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]*wnSynset{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue // the licence
		}
		data, _, _ := strings.Cut(line, " | ")
		fs := strings.Fields(data)
		// offset lex_filenum ss_type w_cnt (word lex_id)... p_cnt (ptr)...
		nw, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("data.%s %s: %w", pos, fs[0], err)
		}
		s := &wnSynset{}
		i := 4
		for range nw {
			w := strings.ToLower(fs[i])
			if j := strings.IndexByte(w, '('); j > 0 {
				w = w[:j] // an adjective's syntactic marker: "big(a)"
			}
			s.words = append(s.words, w)
			i += 2
		}
		np, err := strconv.Atoi(fs[i])
		if err != nil {
			return nil, fmt.Errorf("data.%s %s: %w", pos, fs[0], err)
		}
		i++
		for range np {
			st := fs[i+3]
			src, _ := strconv.ParseInt(st[:2], 16, 32)
			tgt, _ := strconv.ParseInt(st[2:], 16, 32)
			s.ptrs = append(s.ptrs, wnPointer{fs[i], fs[i+2][0], fs[i+1], int(src), int(tgt)})
			i += 4
		}
		out[fs[0]] = s
	}
	return out, sc.Err()
}

// relatedTable derives the table: for each single word of WordNet, from
// its frequent senses (relSenses), the other words of the sense's synset
// and the words its lexical links name (derivations, "convert" ↔
// "conversion"; pertainyms, "digital" → "digit"), if SemCor tagged them
// (frequent words); an irregular form (the .exc lists: "spent", "born")
// gains its base form and the base's relatives. Each word as its term
// (Terms: stemmed, no stop words); one line per term, "term rel rel...",
// in byte order, the words a term's forms share merged.
func relatedTable(dir string) ([]byte, error) {
	synsets := map[byte]map[string]*wnSynset{}
	for c, pos := range map[byte]string{'n': "noun", 'v': "verb", 'a': "adj", 'r': "adv"} {
		m, err := readWordNet(dir, pos)
		if err != nil {
			return nil, err
		}
		synsets[c] = m
	}
	synsets['s'] = synsets['a']
	single := func(w string) bool {
		if len(w) < 2 {
			return false
		}
		for _, r := range w {
			if r < 'a' || r > 'z' {
				return false
			}
		}
		return true
	}
	// frequent are the words SemCor tagged in some sense: a relative must
	// be one (a rare word, "temblor", is unlikely in a tool's text and
	// costs a lookup in every query).
	frequent := map[string]bool{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		b, err := os.ReadFile(filepath.Join(dir, "index."+pos))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			fs := strings.Fields(line)
			if len(fs) < 6 || strings.HasPrefix(line, " ") {
				continue
			}
			np, _ := strconv.Atoi(fs[3])
			if tagged, _ := strconv.Atoi(fs[5+np]); tagged > 0 {
				frequent[fs[0]] = true
			}
		}
	}
	rel := map[string]map[string]bool{}
	link := func(from, to string) {
		if !single(from) || !single(to) || !frequent[to] {
			return
		}
		a, b := term(from), term(to)
		if a == "" || b == "" || a == b {
			return
		}
		if rel[a] == nil {
			rel[a] = map[string]bool{}
		}
		rel[a][b] = true
	}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		c := map[string]byte{"noun": 'n', "verb": 'v', "adj": 'a', "adv": 'r'}[pos]
		f, err := os.Open(filepath.Join(dir, "index."+pos))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "  ") {
				continue
			}
			// lemma pos synset_cnt p_cnt (ptr_symbol)... sense_cnt tagsense_cnt (offset)...
			fs := strings.Fields(line)
			lemma := fs[0]
			if !single(lemma) {
				continue
			}
			np, _ := strconv.Atoi(fs[3])
			tagged, _ := strconv.Atoi(fs[5+np])
			offs := fs[6+np:]
			for i, off := range offs {
				if i >= relSenses || i > 0 && i >= tagged {
					break
				}
				s := synsets[c][off]
				if s == nil {
					f.Close()
					return nil, fmt.Errorf("index.%s %s: no synset %s", pos, lemma, off)
				}
				me := slices.Index(s.words, lemma) + 1
				if n := len(slices.DeleteFunc(slices.Clone(s.words), func(w string) bool { return !single(w) })); n <= relMaxWords {
					for _, w := range s.words {
						link(lemma, w)
					}
				}
				for _, p := range s.ptrs {
					if p.src != me || p.src == 0 {
						continue
					}
					switch p.sym {
					case "+", "\\": // derivationally related form, pertainym
						t := synsets[p.pos][p.off]
						if t == nil || p.tgt < 1 || p.tgt > len(t.words) {
							continue
						}
						link(lemma, t.words[p.tgt-1])
					}
				}
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	// An irregular form ("spent", "mice", "born") stands for its base
	// form, which Stem cannot find: it gains the base and the base's
	// related terms.
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		b, err := os.ReadFile(filepath.Join(dir, pos+".exc"))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			fs := strings.Fields(line)
			if len(fs) < 2 || !single(fs[0]) {
				continue
			}
			form := term(fs[0])
			for _, base := range fs[1:] {
				link(fs[0], base)
				if bt := term(base); bt != "" && form != "" && bt != form && rel[form] != nil {
					for r := range rel[bt] {
						if r != form {
							rel[form][r] = true
						}
					}
				}
			}
		}
	}
	keys := make([]string, 0, len(rel))
	for k := range rel {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		vs := make([]string, 0, len(rel[k]))
		for v := range rel[k] {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		b.WriteString(k)
		for _, v := range vs {
			b.WriteByte(' ')
			b.WriteString(v)
		}
		b.WriteByte('\n')
	}
	return []byte(b.String()), nil
}

func TestRelatedTable(t *testing.T) {
	if _, err := os.Stat(filepath.Join(*wordnetDir, "data.noun")); err != nil {
		if *updateRelated {
			t.Fatalf("no WordNet: %v (apt-get install wordnet-base)", err)
		}
		t.Skipf("no WordNet at %s (apt-get install wordnet-base): %v", *wordnetDir, err)
	}
	got, err := relatedTable(*wordnetDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d terms, %d bytes", strings.Count(string(got), "\n"), len(got))
	if *updateRelated {
		if err := os.WriteFile("related.txt", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != relatedData {
		t.Errorf("related.txt is stale; run go test -run TestRelatedTable -update-related")
	}
}

// TestRelated checks the in-place binary search of the table: every term
// finds its own line, and words between, before and after the terms find
// nothing.
func TestRelated(t *testing.T) {
	t.Parallel()
	lines := strings.Split(strings.TrimSuffix(relatedData, "\n"), "\n")
	if len(lines) < 5000 {
		t.Fatalf("related.txt has %d lines; run go test -run TestRelatedTable -update-related", len(lines))
	}
	prev := ""
	for _, line := range lines {
		key, rest, ok := strings.Cut(line, " ")
		if !ok || rest == "" || key <= prev || strings.ContainsRune(key, 0) {
			t.Fatalf("line %q: want \"term rel...\" after %q in byte order", line, prev)
		}
		prev = key
		if got := related(key); got != rest {
			t.Fatalf("related(%q) = %q, want %q", key, got, rest)
		}
		// key+"\x00" sorts right after key, before any longer term: no term.
		if got := related(key + "\x00"); got != "" {
			t.Fatalf("related(%q) = %q, want none", key+"\x00", got)
		}
	}
	for _, miss := range []string{"", "\x00", "zzzzzzzz", "~"} {
		if got := related(miss); got != "" {
			t.Errorf("related(%q) = %q, want none", miss, got)
		}
	}
	if got := related(term("quakes")); !strings.Contains(" "+got+" ", " "+term("earthquake")+" ") {
		t.Errorf("related(quak) = %q, want earthquak among them", got)
	}
}
