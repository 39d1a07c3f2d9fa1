package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// TestFTS5WithSecureDelete: the SQLite the binary links (modernc.org/sqlite)
// has FTS5 with its secure-delete option, and the store runs with
// PRAGMA secure_delete: what forgetting relies on.
func TestFTS5WithSecureDelete(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	var fts5 int
	if err := s.db.QueryRow(`SELECT sqlite_compileoption_used('ENABLE_FTS5')`).Scan(&fts5); err != nil || fts5 != 1 {
		t.Errorf("ENABLE_FTS5 = %d, %v", fts5, err)
	}
	var on int
	if err := s.db.QueryRow(`SELECT v FROM facts_fts_config WHERE k = 'secure-delete'`).Scan(&on); err != nil || on != 1 {
		t.Errorf("facts_fts secure-delete = %d, %v", on, err)
	}
	// Every connection of the pool, not only the first.
	for i := range maxOpenConns {
		conn, err := s.db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var sd int
		if err := conn.QueryRowContext(t.Context(), `PRAGMA secure_delete`).Scan(&sd); err != nil || sd != 1 {
			t.Errorf("connection %d: secure_delete = %d, %v", i, sd, err)
		}
	}
}

// labeled are the facts of the ranking test, and the queries with the
// fact each must find among its first three.
var labeled = []string{
	"The owner's wife is called Maria and her birthday is on 12 March.",
	"The owner is allergic to peanuts.",
	"The owner's cat is named Tom; he is a grey tabby.",
	"The owner works as a nurse at the Riverside hospital, night shifts.",
	"The owner's car is a blue Volvo V70 from 2008.",
	"The owner prefers answers in British English.",
	"The owner's daughter Lea plays the violin and has lessons on Thursdays.",
	"The wifi router is in the hallway cupboard.",
	"The owner's favourite food is lasagne.",
	"The owner runs a half marathon every October in Berlin.",
	"The garden has tomatoes, courgettes and basil; water them every evening in summer.",
	"The owner's doctor is Dr. Okafor at the Elm Street practice.",
	"The owner's bank is the local credit union.",
	"The owner is learning Japanese and practises kanji every morning.",
	"The owner's mother lives in Lisbon and calls on Sundays.",
	"The owner's laptop is a ThinkPad X1 running Debian.",
	"The heating is serviced every September by Nordic Heat Ltd.",
	"The owner dislikes being called by their surname.",
	"The owner's passport expires in June 2027.",
	"The owner drinks coffee black, no sugar.",
	"Der Kater der Nachbarin heißt Müller.",
}

var rankingQueries = []struct {
	query string
	want  int // index into labeled
}{
	{"when is Maria's birthday?", 0},
	{"peanut allergy", 1},
	{"what is the cat called", 2},
	{"which hospital does the owner work at", 3},
	{"what car do they drive", 4},
	{"violin lessons", 6},
	{"where is the wifi router?", 7},
	{"the marathon in Berlin", 9},
	{"watering the tomatoes", 10},
	{"doctor's appointment", 11},
	{"passport expiry", 18},
	{"how does the owner take coffee", 19},
	{"Japanese kanji", 13},
	{"mother in Lisbon", 14},
	{"muller", 20}, // diacritics folded
}

func remember(t *testing.T, s *Store, texts ...string) []Fact {
	t.Helper()
	var out []Fact
	for i, text := range texts {
		f, stored, err := s.Remember(t.Context(), "c1", int64(i+1), text, time.Unix(int64(1000+i), 0), 0)
		if err != nil || !stored {
			t.Fatalf("Remember(%q) = %v, %v", text, stored, err)
		}
		out = append(out, f)
	}
	return out
}

// TestRecallRanking: on a small labeled set, the fact a question is about
// is among the first three a search answers.
func TestRecallRanking(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	facts := remember(t, s, labeled...)
	for _, q := range rankingQueries {
		got, err := s.Facts(t.Context(), FactQuery{Query: q.query, Limit: 3})
		if err != nil {
			t.Fatalf("%q: %v", q.query, err)
		}
		if !slices.ContainsFunc(got, func(f Fact) bool { return f.ID == facts[q.want].ID }) {
			var texts []string
			for _, f := range got {
				texts = append(texts, f.Text)
			}
			t.Errorf("%q: the first three are %q, without %q", q.query, texts, labeled[q.want])
		}
	}
}

// matchShape is what MatchQuery may answer: quoted strings joined by OR.
var matchShape = regexp.MustCompile(`^("([^"]|"")*"( OR "([^"]|"")*")*)?$`)

// TestHostileQueries: whatever text a query holds (FTS5 operators, column
// filters, quotes, SQL, nothing, megabytes, any Unicode), a search never
// fails, never runs it as syntax (it looks for the words in it), and
// changes nothing.
func TestHostileQueries(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	facts := remember(t, s, "the cat sleeps on the sofa", "the dog barks at the door", "Ünïcödé 猫 🐈 text")
	cat, dog := facts[0].ID, facts[1].ID
	for _, tc := range []struct {
		query string
		want  []int64 // nil: any answer (not an error)
	}{
		{"cat AND dog", []int64{cat, dog}},
		{"cat OR", []int64{cat}},
		{"NOT cat", []int64{cat}},
		{"cat NOT dog", []int64{cat, dog}},
		{"NEAR(cat sofa, 2)", []int64{cat}},
		{"cat*", []int64{cat}},
		{"ca*", []int64{}},
		{"^cat", []int64{cat}},
		{"text:cat", []int64{facts[2].ID, cat}},
		{"{text}: dog", []int64{facts[2].ID, dog}},
		{"rowid:1", []int64{}},
		{"rank:1", []int64{}},
		{`"cat`, []int64{cat}},
		{`cat"`, []int64{cat}},
		{`""`, []int64{}},
		{`"" OR ""`, []int64{}},
		{"(cat", []int64{cat}},
		{"cat)", []int64{cat}},
		{"-cat", []int64{cat}},
		{"+dog", []int64{dog}},
		{"*", []int64{}},
		{"AND", []int64{}},
		{"OR OR OR", []int64{}},
		{"NEAR", []int64{}},
		{"'; DROP TABLE facts; --", []int64{}},
		{`" OR 1=1 --`, []int64{}},
		{"') OR ('1'='1", []int64{}},
		{"facts_fts MATCH '*'", []int64{}},
		{"", nil}, // no query at all: the listing, newest first
		{"   \t\n ", []int64{}},
		{"\u0301\u0301", []int64{}},
		{"cat\x00dog", nil},
		{"\xff\xfecat", nil},
		{"\u202ecat", []int64{cat}},
		{"unicode", []int64{facts[2].ID}},
		{"猫", nil},
		{"🐈 dog", []int64{dog}},
		{strings.Repeat("cat ", 1<<18), []int64{cat}},
		{strings.Repeat("x", 1<<20), []int64{}},
		{strings.Repeat("é", 1<<12) + " cat", nil},
		{strings.Repeat("w1 w2 w3 w4 ", 100) + "cat", nil},
	} {
		name := tc.query
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		if m := MatchQuery(tc.query); !matchShape.MatchString(m) || len(strings.Split(m, " OR ")) > MaxQueryTerms {
			t.Errorf("%q: MatchQuery = %q", name, m)
		}
		got, err := s.Facts(t.Context(), FactQuery{Query: tc.query, Limit: 10})
		if err != nil {
			t.Errorf("%q: %v", name, err)
			continue
		}
		if tc.want == nil {
			continue
		}
		var ids []int64
		for _, f := range got {
			ids = append(ids, f.ID)
		}
		slices.Sort(ids)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(ids, want) && !(len(ids) == 0 && len(want) == 0) {
			t.Errorf("%q: facts %v, want %v", name, ids, want)
		}
	}
	if n, err := s.CountFacts(t.Context()); err != nil || n != 3 {
		t.Errorf("after the queries: %d facts, %v", n, err)
	}
}

// TestMatchQuery pins the query text: quoted words joined by OR, each once,
// at most MaxQueryTerms of them.
func TestMatchQuery(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"cat":                      `"cat"`,
		"Cat cat CAT dog":          `"Cat" OR "dog"`,
		`text:"a" NEAR(b*, 2) ^c`:  `"text" OR "a" OR "NEAR" OR "b" OR "2" OR "c"`,
		"l'été à Zürich":           `"l" OR "été" OR "à" OR "Zürich"`,
		"":                         "",
		"* ^ : \" ( ) - + { } ' ;": "",
	} {
		if got := MatchQuery(in); got != want {
			t.Errorf("MatchQuery(%q) = %q, want %q", in, got, want)
		}
	}
	var many []string
	for i := range 2 * MaxQueryTerms {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	if got := strings.Count(MatchQuery(strings.Join(many, " ")), " OR ") + 1; got != MaxQueryTerms {
		t.Errorf("%d terms, want %d", got, MaxQueryTerms)
	}
}

// TestRememberOnceAndTheCap: the same text is one fact; at the cap a new
// fact is refused (ErrMemoryFull) and nothing is stored, while a fact
// already there is still answered.
func TestRememberOnceAndTheCap(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	a, stored, err := s.Remember(ctx, "c1", 1, "one", time.Unix(1, 0), 2)
	if err != nil || !stored {
		t.Fatal(stored, err)
	}
	again, stored, err := s.Remember(ctx, "c2", 5, "one", time.Unix(2, 0), 2)
	if err != nil || stored || again.ID != a.ID || again.Chat != "c1" || !again.CreatedAt.Equal(time.Unix(1, 0)) {
		t.Errorf("the same fact again = %+v, %v, %v", again, stored, err)
	}
	if _, _, err := s.Remember(ctx, "c1", 1, "two", time.Unix(3, 0), 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Remember(ctx, "c1", 1, "three", time.Unix(4, 0), 2); !errors.Is(err, ErrMemoryFull) {
		t.Errorf("over the cap: %v", err)
	}
	if _, stored, err := s.Remember(ctx, "c1", 1, "two", time.Unix(4, 0), 2); err != nil || stored {
		t.Errorf("a fact already there, at the cap: %v, %v", stored, err)
	}
	if n, _ := s.CountFacts(ctx); n != 2 {
		t.Errorf("%d facts, want 2", n)
	}
	if _, _, err := s.Remember(ctx, "c1", 1, "", time.Unix(4, 0), 0); err == nil {
		t.Error("an empty fact was stored")
	}
	audit, err := s.Audit(ctx, AuditQuery{Tool: contracts.ToolRemember})
	if err != nil || len(audit) != 2 {
		t.Fatalf("audit = %+v, %v", audit, err)
	}
	if e := audit[1]; e.Kind != KindMemoryStored || e.Chat != "c1" || e.Turn != 1 ||
		e.Args != fmt.Sprintf(`{"fact":%d,"sha256":"%s"}`, a.ID, FactHash("one")) || e.Summary != fmt.Sprintf("fact #%d stored", a.ID) {
		t.Errorf("the stored row = %+v", e)
	}
}

// TestFactsPages: without a query, the facts newest first, a page at a
// time.
func TestFactsPages(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	facts := remember(t, s, "a1", "a2", "a3", "a4", "a5")
	page, err := s.Facts(t.Context(), FactQuery{Limit: 2})
	if err != nil || len(page) != 2 || page[0].ID != facts[4].ID || page[1].ID != facts[3].ID {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	page, err = s.Facts(t.Context(), FactQuery{Limit: 2, Before: page[1].ID})
	if err != nil || len(page) != 2 || page[0].ID != facts[2].ID {
		t.Fatalf("second page = %+v, %v", page, err)
	}
	if f, err := s.Fact(t.Context(), facts[0].ID); err != nil || f != facts[0] {
		t.Errorf("Fact = %+v, %v; want %+v", f, err, facts[0])
	}
	if _, err := s.Fact(t.Context(), 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Fact(999): %v", err)
	}
}

// The forgotten fact of TestForgetReallyForgets, and the words of it that
// no other fact holds.
const (
	forgotten = "The spare key hides under the zanzibarquux pot, code xylophonia-4471."
)

var forgottenWords = []string{"zanzibarquux", "xylophonia", "4471", forgotten}

// TestForgetReallyForgets: after ForgetFact the fact is gone from the row,
// from the full-text index (a raw MATCH, the index's vocabulary and
// document sizes) and from the bytes of the database file and its log,
// among hundreds of other facts whose index segments were merged; no
// search finds it; the audit keeps its id and hash, and never its words;
// its id is not given to another fact.
func TestForgetReallyForgets(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shelldon.db")
	s := openAt(t, path)
	ctx := t.Context()
	var filler []string
	for i := range 300 {
		filler = append(filler, fmt.Sprintf("filler fact %d about the garden, the pot and the key of the shed number %d", i, i*7))
	}
	remember(t, s, filler[:150]...)
	f := remember(t, s, forgotten)[0]
	remember(t, s, filler[150:]...)
	if got, _ := s.Facts(ctx, FactQuery{Query: "zanzibarquux"}); len(got) != 1 || got[0].ID != f.ID {
		t.Fatalf("before forgetting, the search finds %+v", got)
	}

	old, err := s.ForgetFact(ctx, f.ID, time.Unix(5000, 0), "cli")
	if err != nil || old.Text != forgotten {
		t.Fatalf("ForgetFact = %+v, %v", old, err)
	}
	if _, err := s.ForgetFact(ctx, f.ID, time.Unix(5000, 0), "cli"); !errors.Is(err, ErrNotFound) {
		t.Errorf("forget again: %v", err)
	}
	if _, err := s.Fact(ctx, f.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Fact after forget: %v", err)
	}
	for _, w := range forgottenWords[:3] {
		if got, err := s.Facts(ctx, FactQuery{Query: w}); err != nil || len(got) != 0 {
			t.Errorf("search %q after forget = %+v, %v", w, got, err)
		}
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?`, `"`+w+`"`).Scan(&n); err != nil || n != 0 {
			t.Errorf("raw MATCH %q after forget = %d, %v", w, n, err)
		}
	}
	if _, err := s.db.Exec(`CREATE VIRTUAL TABLE temp.facts_vocab USING fts5vocab(main, facts_fts, instance)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM temp.facts_vocab WHERE doc = ? OR term LIKE 'zanzibar%' OR term LIKE 'xylophon%'`, f.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("the index's vocabulary still holds the fact: %d entries, %v", n, err)
	}
	if err := s.db.QueryRow(`SELECT count(*) FROM facts_fts_docsize WHERE id = ?`, f.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("the index's document sizes still hold the fact: %d, %v", n, err)
	}
	// The bytes: the database file and its log, as they are on disk now,
	// with the store still open (the log was checkpointed and truncated).
	for _, p := range []string{path, path + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		// The text, and the stems of its rare words as the index spells them.
		for _, w := range []string{forgotten, "hides under", "zanzibar", "xylophon"} {
			if bytes.Contains(data, []byte(w)) {
				t.Errorf("%s still holds %q", filepath.Base(p), w)
			}
		}
	}
	// The audit: the fact's id and hash, stored and forgotten; never its words.
	all, err := s.Audit(ctx, AuditQuery{Limit: MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]AuditEntry{}
	for _, e := range all {
		for _, w := range forgottenWords {
			if strings.Contains(e.Args+e.Summary, w) {
				t.Errorf("audit row %d holds %q: %+v", e.ID, w, e)
			}
		}
		if strings.Contains(e.Args, fmt.Sprintf(`"fact":%d,`, f.ID)) {
			kinds[e.Kind] = e
		}
	}
	want := fmt.Sprintf(`{"fact":%d,"sha256":"%s"}`, f.ID, FactHash(forgotten))
	for _, k := range []string{KindMemoryStored, KindMemoryForgotten} {
		if kinds[k].Args != want {
			t.Errorf("the %s row = %+v, want args %s", k, kinds[k], want)
		}
	}
	if e := kinds[KindMemoryForgotten]; e.Summary != fmt.Sprintf("fact #%d forgotten by cli", f.ID) || !e.At.Equal(time.Unix(5000, 0)) {
		t.Errorf("the forgotten row = %+v", e)
	}
	// A new fact never takes the forgotten one's id.
	if g, _, err := s.Remember(ctx, "c1", 9, "a later fact", time.Unix(6000, 0), 0); err != nil || g.ID <= f.ID+150 {
		t.Errorf("a later fact = %+v, %v", g, err)
	}
}

// TestEditFact: an edit replaces the text in the row and the index (the
// old words are not found, nor left in the file), keeps where the fact was
// said, and is audited with both hashes.
func TestEditFact(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shelldon.db")
	s := openAt(t, path)
	ctx := t.Context()
	f := remember(t, s, forgotten, "another fact")[0]
	e, err := s.EditFact(ctx, f.ID, "The spare key is with the neighbour.", time.Unix(7000, 0), "http")
	if err != nil || e.Text != "The spare key is with the neighbour." || e.Chat != "c1" || !e.CreatedAt.Equal(f.CreatedAt) || !e.UpdatedAt.Equal(time.Unix(7000, 0)) {
		t.Fatalf("EditFact = %+v, %v", e, err)
	}
	if got, _ := s.Fact(ctx, f.ID); got != e {
		t.Errorf("Fact after edit = %+v, want %+v", got, e)
	}
	if got, _ := s.Facts(ctx, FactQuery{Query: "zanzibarquux"}); len(got) != 0 {
		t.Errorf("the old words are still found: %+v", got)
	}
	if got, _ := s.Facts(ctx, FactQuery{Query: "neighbour"}); len(got) != 1 || got[0].ID != f.ID {
		t.Errorf("the new words are not found: %+v", got)
	}
	for _, p := range []string{path, path + "-wal"} {
		data, _ := os.ReadFile(p)
		if bytes.Contains(data, []byte("zanzibar")) || bytes.Contains(data, []byte("xylophon")) {
			t.Errorf("%s still holds the old words", filepath.Base(p))
		}
	}
	rows, err := s.Audit(ctx, AuditQuery{Limit: 1})
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	want := fmt.Sprintf(`{"fact":%d,"sha256":"%s","was_sha256":"%s"}`, f.ID, FactHash(e.Text), FactHash(forgotten))
	if r := rows[0]; r.Kind != KindMemoryEdited || r.Args != want || r.Summary != fmt.Sprintf("fact #%d edited by http", f.ID) {
		t.Errorf("the edited row = %+v", r)
	}
	if _, err := s.EditFact(ctx, 999, "x", time.Unix(7000, 0), "cli"); !errors.Is(err, ErrNotFound) {
		t.Errorf("edit of no fact: %v", err)
	}
	if _, err := s.EditFact(ctx, f.ID, "", time.Unix(7000, 0), "cli"); err == nil {
		t.Error("an edit to nothing was stored")
	}
}
