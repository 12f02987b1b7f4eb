package probe

import (
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n      int
		low, high float64
	}{
		// Reference values of the Wilson score interval at z = 1.96.
		{0, 10, 0, 0.2775},
		{5, 10, 0.2366, 0.7634},
		{9, 450, 0.0105, 0.0376},
		{0, 1500, 0, 0.00256},
		{1500, 1500, 0.99744, 1},
		{0, 0, 0, 1},
	} {
		low, high := wilson(tc.k, tc.n, z95)
		if math.Abs(low-tc.low) > 5e-4 || math.Abs(high-tc.high) > 5e-4 {
			t.Errorf("wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, low, high, tc.low, tc.high)
		}
	}
	// The interval holds the observed share exactly, at every n: a served
	// loss of 0 has a low bound of 0, not a hair above it.
	for n := 1; n <= 2000; n++ {
		for _, k := range []int{0, n / 3, n} {
			p := float64(k) / float64(n)
			if low, high := wilson(k, n, z95); low > p || high < p {
				t.Fatalf("wilson(%d, %d) = [%g, %g] does not hold %g", k, n, low, high, p)
			}
		}
	}
}

func TestMedianInterval(t *testing.T) {
	seq := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i + 1)
		}
		return s
	}
	for _, tc := range []struct {
		xs             []float64
		med, low, high float64
	}{
		// 100 samples 1..100: ranks 40 and 61 bound the median at 95 %.
		{seq(100), 50.5, 40, 61},
		// Few samples: the interval is as wide as the sample.
		{seq(3), 2, 1, 3},
		{[]float64{7}, 7, 7, 7},
	} {
		med, low, high := medianInterval(tc.xs, z95)
		if med != tc.med || low != tc.low || high != tc.high {
			t.Errorf("medianInterval(1..%d) = %v [%v, %v], want %v [%v, %v]", len(tc.xs), med, low, high, tc.med, tc.low, tc.high)
		}
	}
}

func TestRoundDown2(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{5953.8, 5900}, {99.2, 99}, {100, 100}, {20.96, 20}, {0.0456, 0.045}, {0, 0}, {-1, 0}, {math.NaN(), 0},
	} {
		if got := roundDown2(tc.in); math.Abs(got-tc.want) > 1e-9*math.Max(1, tc.want) {
			t.Errorf("roundDown2(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
