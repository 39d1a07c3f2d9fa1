// Package toolsearch ranks tools by relevance to a request, so that a turn
// can offer the model the few self-coded tools that fit the conversation
// rather than the whole toolbox.
//
// An Index is built once per toolbox change (Build, linear in the number of
// terms of the tools) from each tool's name, description and the names and
// descriptions of its JSON-schema parameters; Rank scores the tools with
// BM25 (the name weighted above the rest, see Weights), optionally adding a
// decayed recent-use boost (RankRecent). The index is an inverted one in
// flat arrays: a query reads only the postings of its own terms, and for a
// term found in more than capPostings tools only a precomputed list of its
// best tools, so the cost of a query is bounded by its length, not by the
// size of the toolbox.
//
// The package is pure computation over strings: it does no I/O, holds no
// global state but constant tables, and imports only the standard library.
// An Index is immutable after Build and safe for concurrent use.
package toolsearch
