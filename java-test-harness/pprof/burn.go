// burn.go - a Go program that profiles itself with runtime/pprof, for pprof_check.sh: two functions burn the
// CPU in a 3:1 split for the given seconds while the CPU profile is written to the given file; with a third
// argument it also writes a heap profile there.
//
// Usage: go run burn.go SECONDS CPU.pb.gz [HEAP.pb.gz]
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64
var keep [][]byte

//go:noinline
func spin(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func burnA() { sink += spin(3000000) }

//go:noinline
func burnB() {
	sink += spin(1000000)
	keep = append(keep, make([]byte, 64<<10))
	if len(keep) > 64 {
		keep = keep[:0]
	}
}

func main() {
	seconds, _ := strconv.ParseFloat(os.Args[1], 64)
	out, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		panic(err)
	}
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(end) {
		burnA()
		burnB()
	}
	pprof.StopCPUProfile()
	out.Close()
	if len(os.Args) > 3 {
		runtime.GC()
		heap, err := os.Create(os.Args[3])
		if err != nil {
			panic(err)
		}
		pprof.WriteHeapProfile(heap)
		heap.Close()
	}
}
