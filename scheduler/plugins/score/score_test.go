package score

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
)

func TestNormalizeScores(t *testing.T) {
	tests := []struct {
		name      string
		normalize func(fwk.NodeScoreList)
		in        []int64 // simulator score × 1000
		want      []int64
	}{
		{"min-max empty", minMax, nil, nil},
		{"min-max one node", minMax, []int64{420}, []int64{100}},
		{"min-max all zero", minMax, []int64{0, 0, 0}, []int64{100, 100, 100}},
		{"min-max all equal", minMax, []int64{7, 7}, []int64{100, 100}},
		{"min-max linear", minMax, []int64{0, 250, 500, 1000}, []int64{0, 25, 50, 100}},
		{"min-max offset", minMax, []int64{100, 200, 300}, []int64{0, 50, 100}},
		{"min-max close scores stretched", minMax, []int64{900, 890}, []int64{100, 0}},
		{"min-max negative", minMax, []int64{-1000, 0, 1000}, []int64{0, 50, 100}},
		{"min-max all negative", minMax, []int64{-300, -200, -100}, []int64{0, 50, 100}},
		{"min-max rounds down", minMax, []int64{0, 1, 3}, []int64{0, 33, 100}},
		{"min-max full int64 range", minMax, []int64{math.MinInt64, 0, math.MaxInt64}, []int64{0, 50, 100}},
		{"min-max large close values", minMax, []int64{math.MaxInt64 - 1000, math.MaxInt64}, []int64{0, 100}},
		// Past 2^53, float64 would round d × 100 and the quotient.
		{"min-max large span keeps the best at 100", minMax, []int64{0, 1112603089564874}, []int64{0, 100}},
		{"min-max large span rounds down exactly", minMax, []int64{0, 3823561820858031, 7497180040898100}, []int64{0, 51, 100}},
		{"min-max one below the highest", minMax, []int64{math.MinInt64, math.MaxInt64 - 1, math.MaxInt64}, []int64{0, 99, 100}},
		{"absolute empty", absoluteScores, nil, nil},
		{"absolute keeps the scale", absoluteScores, []int64{900, 890, 100}, []int64{90, 89, 10}},
		{"absolute all equal", absoluteScores, []int64{700, 700}, []int64{70, 70}},
		{"absolute all zero", absoluteScores, []int64{0, 0}, []int64{0, 0}},
		{"absolute rounds down", absoluteScores, []int64{999, 1}, []int64{99, 0}},
		{"absolute clamps above 1", absoluteScores, []int64{1000, 5000, math.MaxInt64}, []int64{100, 100, 100}},
		{"absolute clamps below 0", absoluteScores, []int64{-1, -1000, math.MinInt64}, []int64{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := make(fwk.NodeScoreList, len(tt.in))
			for i, s := range tt.in {
				list[i] = fwk.NodeScore{Name: fmt.Sprint(i), Score: s}
			}
			tt.normalize(list)
			for i := range list {
				if list[i].Score != tt.want[i] {
					t.Fatalf("normalize(%v) = %v, want %v", tt.in, list, tt.want)
				}
				if list[i].Score < 0 || list[i].Score > fwk.MaxNodeScore {
					t.Fatalf("score %d out of range", list[i].Score)
				}
			}
		})
	}

	// Large spans, 1e14 to 1e18 and up to the whole int64 range, against an
	// exact computation.
	r := rand.New(rand.NewPCG(1, 2))
	var inputs [][]int64
	for range 500 {
		span := uint64(math.Pow(10, 14+4*r.Float64()))
		lowest := math.MinInt64 + int64(r.Uint64N(math.MaxUint64-span))
		in := []int64{lowest, int64(uint64(lowest) + span)}
		for range 4 {
			in = append(in, int64(uint64(lowest)+r.Uint64N(span+1)))
		}
		inputs = append(inputs, in)
	}
	inputs = append(inputs,
		[]int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 / 3, math.MaxInt64 - 1, math.MaxInt64},
		[]int64{math.MinInt64, math.MinInt64 + 1e17 + 3, math.MinInt64 + 1e18 - 1, math.MinInt64 + 1e18},
		[]int64{math.MaxInt64 - 1e18, math.MaxInt64 - 1e16 - 7, math.MaxInt64 - 1, math.MaxInt64},
		[]int64{math.MinInt64, math.MinInt64 + 1e14, math.MinInt64 + 99999999999999},
		[]int64{math.MaxInt64 - 1e14, math.MaxInt64 - 1, math.MaxInt64},
		[]int64{-1e18, -1, 1e18 - 1, 1e18},
	)
	for _, in := range inputs {
		list := make(fwk.NodeScoreList, len(in))
		for i, s := range in {
			list[i] = fwk.NodeScore{Name: fmt.Sprint(i), Score: s}
		}
		minMax(list)
		want := exactMinMax(in)
		for i := range list {
			if list[i].Score != want[i] {
				t.Errorf("minMax(%v): score %d is %d, want %d", in, in[i], list[i].Score, want[i])
			}
		}
	}
}

// exactMinMax is MinMax normalization in arbitrary precision:
// floor((s − lowest) × MaxNodeScore / (highest − lowest)), all MaxNodeScore
// when every score is equal.
func exactMinMax(in []int64) []int64 {
	lowest, highest := slices.Min(in), slices.Max(in)
	out := make([]int64, len(in))
	span := new(big.Int).Sub(big.NewInt(highest), big.NewInt(lowest))
	for i, s := range in {
		if lowest == highest {
			out[i] = fwk.MaxNodeScore
			continue
		}
		n := new(big.Int).Sub(big.NewInt(s), big.NewInt(lowest))
		n.Mul(n, big.NewInt(fwk.MaxNodeScore))
		out[i] = n.Quo(n, span).Int64()
	}
	return out
}

func TestRank(t *testing.T) {
	scores := map[string]int64{"a": 900, "b": 500, "c": 500, "x": 999}
	candidates := []string{"a", "b", "c", "d"}
	for node, want := range map[string]int{"a": 1, "b": 2, "c": 2, "d": 0} {
		if got := Rank(scores, candidates, node); got != want {
			t.Errorf("Rank(%s) = %d, want %d (x is no candidate, d has no score)", node, got, want)
		}
	}
}

func TestMilliScore(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want int64
		ok   bool
	}{
		{0.9, 900, true}, {-0.5, -500, true}, {0.0001, 0, true},
		{1e300, math.MaxInt64, true}, {-1e300, math.MinInt64, true}, {9.3e15, math.MaxInt64, true},
		{math.NaN(), 0, false}, {math.Inf(1), 0, false}, {math.Inf(-1), 0, false},
	} {
		if got, ok := MilliScore(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("MilliScore(%v) = %d, %t; want %d, %t", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFloatAndFormat(t *testing.T) {
	for _, tt := range []struct {
		milli int64
		f     float64
		s     string
	}{{900, 0.9, "0.900"}, {-500, -0.5, "-0.500"}, {1, 0.001, "0.001"}, {0, 0, "0.000"}} {
		if got := Float(tt.milli); got != tt.f {
			t.Errorf("Float(%d) = %v, want %v", tt.milli, got, tt.f)
		}
		if got := Format(tt.milli); got != tt.s {
			t.Errorf("Format(%d) = %q, want %q", tt.milli, got, tt.s)
		}
	}
}
