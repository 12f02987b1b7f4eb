package safetext

import "testing"

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"Network-aware: n1 has simulator score 0.900": "Network-aware: n1 has simulator score 0.900",
		"né, ☃, 東京":                                   "né, ☃, 東京",
		"\x1b[2J\x1b[HNetwork-aware: ok":              "^[[2J^[[HNetwork-aware: ok",
		"\x1b]52;c;cGF3bmVk\x07":                      `^[]52;c;cGF3bmVk\x07`,
		"a\tb\nc\rd":                                  `a\tb\nc\rd`,
		"\u009b31m":                                   `\x9b31m`,
		"\u202etxt.exe":                               `\u202etxt.exe`,
		"bad \xff byte":                               `bad \xff byte`,
		"del\x7f":                                     `del\x7f`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}
