package core

import "github.com/shelldon/shelldon/internal/core/store"

// Session is a browser's sign-in to the web UI, kept in the store
// (web_sessions) by the SHA-256 of its cookie; the web transport keeps
// them through its SessionStore, which *store.Store is.
type Session = store.Session

// ErrNoSession is a session that is not there, or has gone unused too long.
var ErrNoSession = store.ErrNoSession
