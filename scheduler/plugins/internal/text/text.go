// Package text bounds the free text the KNS-3 plugins write into API
// objects: a placement event's note, a field manager's name, the published
// status.
package text

import "unicode/utf8"

// Mark ends a cut text.
const Mark = "…"

// Truncate cuts s to at most n bytes (n ≥ len(Mark)) on a rune boundary,
// marking the cut with Mark; s is returned whole when it fits.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(Mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + Mark
}
