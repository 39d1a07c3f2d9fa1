package toolsearch

// keep adds c to h, a heap of at most k items whose root is the worst
// kept (by better), and returns it: c goes in while there is room, or in
// place of the root when it is better. Ranking and the postings' heads
// both keep their best k this way, in O(log k) per item.
func keep[T any](h []T, c T, k int, better func(x, y T) bool) []T {
	if len(h) < k {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(h[p], h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return h
	}
	if k == 0 || !better(c, h[0]) {
		return h
	}
	h[0] = c
	for i := 0; ; {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && better(h[w], h[l]) {
			w = l
		}
		if r < len(h) && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return h
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
