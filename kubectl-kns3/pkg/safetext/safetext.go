// Package safetext makes text that the tool did not write (event
// messages, pod conditions, the simulator's source, error bodies) safe to
// print on a terminal: anyone who may create an event could otherwise
// clear the screen, rewrite earlier lines, set the title or write the
// clipboard with escape sequences, or break a table with tabs and
// newlines.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/printers"
)

// Line returns s as one printable line: kubectl's own escaping
// (printers.EscapeTerminal: ESC as ^[, CR as \r), then every other control
// character, invalid byte and bidirectional override written out as an
// escape, so that what is printed is what was sent, visibly.
func Line(s string) string {
	s = printers.EscapeTerminal(s)
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s holds nothing Line would change.
func isPlain(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	return true
}
