package value

// OrderBalanced names the order TrialOrder gives a Report's trials.
const OrderBalanced = "balanced"

// TrialOrder is the order trial (from 0) runs n placements in, as
// indexes into the level's placements: the rows of a Williams design.
// Over n trials (2n when n is odd) every placement runs in every position
// once, as a rotation also gives, and follows every other placement
// exactly once, which a rotation does not: there each placement always
// follows the same one, so whatever a run leaves behind on the cluster
// would always count against the same neighbour.
func TrialOrder(n, trial int) []int {
	if n <= 0 {
		return nil
	}
	// The first row goes 0, 1, n−1, 2, n−2, …; row r adds r to each.
	first := make([]int, n)
	for k := 1; k < n; k++ {
		if k%2 == 1 {
			first[k] = (k + 1) / 2
		} else {
			first[k] = n - k/2
		}
	}
	rows := n
	if n%2 == 1 {
		// An odd n needs each row reversed as well to balance who
		// follows whom.
		rows = 2 * n
	}
	r := trial % rows
	order := make([]int, n)
	for k := range order {
		order[k] = (first[k] + r) % n
	}
	if r >= n {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			order[i], order[j] = order[j], order[i]
		}
	}
	return order
}
