package netbench

import "sync/atomic"

// sink keeps Burn's arithmetic from being optimised away.
var sink atomic.Uint64

// Burn keeps workers goroutines busy until stop is closed: a pod that uses
// every CPU it can get.
func Burn(workers int, stop <-chan struct{}) {
	done := make(chan struct{})
	for range workers {
		go func() {
			x := uint64(1)
			for {
				select {
				case <-stop:
					done <- struct{}{}
					return
				default:
				}
				for range 1 << 16 {
					x = x*6364136223846793005 + 1442695040888963407
				}
				sink.Store(x)
			}
		}()
	}
	for range workers {
		<-done
	}
}
