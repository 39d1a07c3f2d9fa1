// Package toolsearch ranks tools by relevance to a request, so that a turn
// can offer the model the few self-coded tools that fit the conversation
// rather than the whole toolbox.
//
// An Index is built once per toolbox change (Build, linear in the number of
// terms of the tools) from each tool's name, description and the names and
// descriptions of its JSON-schema parameters. Text becomes terms (Terms)
// by splitting snake_case and camelCase, writing out units, currencies and
// format abbreviations ("kg", "$", "°C", "jpg", "15 min") and the formats
// of file name extensions ("deploy.sh" is a shell script), keeping a
// hyphenated compound as a term of its own ("check-in", "e-book" as
// "ebook"), and Porter stemming (Stem). A query gains terms from everyday
// phrases, synonyms (a table that bridges everyday words and the words
// tool names use), related words (a table derived from WordNet: synonyms
// of a word's frequent senses and its derivations, "quake" →
// "earthquake", "conversion" → "convert"; at a low weight, higher for a
// word no tool uses), acronyms of words in a row ("body mass index"),
// the shapes of values pasted into it ("caf%C3%A9" is percent-escaped, 64
// hex digits a SHA-256 digest) and prefixes of its terms; its light words
// (particles and light verbs: "out", "up", "make", "take") weigh half.
// Rank scores the tools with BM25 (the name weighted above the rest),
// optionally adding a decayed recent-use boost (RankRecent).
//
// The index is an inverted one in flat arrays, its vocabulary one sorted
// string: a query reads only the postings of its own terms into a score
// array reused from a pool, and for a term found in more than capPostings
// tools only an impact-ordered head of its postings, looking up the rest
// only for tools whose bound could still reach the top k (MaxScore). So
// the cost of a query is bounded by its length (maxQueryTerms), not by the
// size of the toolbox, and its result is exact.
//
// The package is pure computation over strings: it does no I/O, holds no
// global state but constant tables, and imports only the standard library.
// The tables cost nothing until a first Build or Rank: the WordNet table
// (related.txt, under 1 MB) is searched in place in the binary's
// read-only data, the small hand-written ones are built on first use.
// An Index is immutable after Build and safe for concurrent use.
package toolsearch
