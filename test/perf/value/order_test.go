package value

import (
	"fmt"
	"testing"
)

// TestTrialOrder checks, for the benchmark's placement counts, that over a
// whole design every placement runs in every position equally often and
// follows every other placement equally often.
func TestTrialOrder(t *testing.T) {
	// 4 placements in the sweep, 8 and 14 in the splits of 6 and 12
	// clients; odd counts too, and the trivial ones.
	for _, n := range []int{1, 2, 3, 4, 5, 8, 14} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rows := n
			if n%2 == 1 {
				rows = 2 * n
			}
			position := map[[2]int]int{}
			follows := map[[2]int]int{}
			for trial := range rows {
				order := TrialOrder(n, trial)
				seen := map[int]bool{}
				for k, p := range order {
					if p < 0 || p >= n || seen[p] {
						t.Fatalf("trial %d: %v is not an order of %d placements", trial, order, n)
					}
					seen[p] = true
					position[[2]int{p, k}]++
					if k > 0 {
						follows[[2]int{order[k-1], p}]++
					}
				}
			}
			for p := range n {
				for k := range n {
					if got := position[[2]int{p, k}]; got != rows/n {
						t.Errorf("placement %d ran %d times in position %d, want %d", p, got, k, rows/n)
					}
				}
				for q := range n {
					want := rows / n
					if p == q {
						want = 0
					}
					if got := follows[[2]int{p, q}]; got != want {
						t.Errorf("placement %d followed %d %d times, want %d", q, p, got, want)
					}
				}
			}
			// The design repeats after its rows.
			if fmt.Sprint(TrialOrder(n, rows)) != fmt.Sprint(TrialOrder(n, 0)) {
				t.Errorf("trial %d: %v, want trial 0's %v", rows, TrialOrder(n, rows), TrialOrder(n, 0))
			}
		})
	}
}
