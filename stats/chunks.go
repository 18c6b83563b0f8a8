package stats

import (
	"runtime"
	"sync"
)

// drawsPerChunk is the unit of resampling work handed to one goroutine; each
// chunk has its own random stream (rng.go).
const drawsPerChunk = 64

// forEachChunk calls work(chunk, first, count) for consecutive chunks of
// draws, on up to GOMAXPROCS goroutines. newWorker gives each goroutine its
// own scratch state, passed to work.
func forEachChunk[S any](draws int, newWorker func() S, work func(scratch S, chunk, first, count int)) {
	chunks := (draws + drawsPerChunk - 1) / drawsPerChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scratch := newWorker()
			for chunk := range next {
				first := chunk * drawsPerChunk
				work(scratch, chunk, first, min(drawsPerChunk, draws-first))
			}
		}()
	}
	for chunk := range chunks {
		next <- chunk
	}
	close(next)
	wg.Wait()
}
