package store

// ForgetHistory drops the turns s holds decoded (historyCache), for the
// benchmarks of package store_test.
func (s *Store) ForgetHistory() { s.history.forget() }
