package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTruncate cuts at every byte of multi-byte runes, near a bound of
// the placement event's size.
func TestTruncate(t *testing.T) {
	const maxMessage = 1024
	// 1-, 2-, 3- and 4-byte runes, shifted by an ASCII prefix so that the
	// cut falls on every byte of each.
	const runes = "aé€𝄞"
	for offset := range len(runes) {
		s := strings.Repeat("x", offset) + strings.Repeat(runes, maxMessage/len(runes)+2)
		for n := maxMessage - 2*len(runes); n <= maxMessage; n++ {
			got := Truncate(s, n)
			if len(got) > n || len(got) <= n-utf8.UTFMax || !utf8.ValidString(got) ||
				!strings.HasSuffix(got, "…") || !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
				t.Errorf("Truncate(%d bytes, %d) = %d bytes ending %q: want at most %d and more than %d bytes, cut on a rune boundary, ending …",
					len(s), n, len(got), got[max(0, len(got)-8):], n, n-utf8.UTFMax)
			}
		}
	}
	for _, s := range []string{strings.Repeat("x", maxMessage), strings.Repeat("é", maxMessage/2)} {
		if got := Truncate(s, maxMessage); got != s {
			t.Errorf("Truncate cut a %d-byte string at %d bytes", len(s), maxMessage)
		}
	}
	if got := Truncate(strings.Repeat("x", maxMessage+1), maxMessage); len(got) != maxMessage || !strings.HasSuffix(got, "…") {
		t.Errorf("Truncate of %d bytes = %d bytes ending %q, want %d ending …", maxMessage+1, len(got), got[len(got)-8:], maxMessage)
	}
	// The field manager's bound, with a multi-byte rune across it.
	if got := Truncate("kns-3-scheduler/"+strings.Repeat("é", 100), 128); len(got) > 128 || !utf8.ValidString(got) || !strings.HasSuffix(got, Mark) {
		t.Errorf("Truncate to 128 = %q (%d bytes)", got, len(got))
	}
}
