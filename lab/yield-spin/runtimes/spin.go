// spin.go: Go goroutines that contend and spin, to see whether Go's runtime makes sched_yield
// storms. Modes (each bounded by ITERS per goroutine):
//   mutex:   G goroutines take one sync.Mutex for a short critical section (sync.Mutex spins
//            in user space, then parks the goroutine on a runtime semaphore)
//   gosched: G goroutines spin on an atomic flag handed round-robin, calling runtime.Gosched()
//            while it is not their turn (a user-space yield: no syscall by itself)
//   spinlock: G goroutines take a CAS spin lock, runtime.Gosched() after each failed try
// Run with GOMAXPROCS far above the cores (e.g. 64 on 2) to have many OS threads.
// usage: spin MODE GOROUTINES ITERS
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

func work(x uint64) uint64 {
	for i := 0; i < 2000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func main() {
	mode := os.Args[1]
	g, _ := strconv.Atoi(os.Args[2])
	iters, _ := strconv.Atoi(os.Args[3])
	var mu sync.Mutex
	var lock, turn atomic.Int32
	var shared uint64
	var wg sync.WaitGroup
	for id := 0; id < g; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				switch mode {
				case "mutex":
					mu.Lock()
					shared = work(shared)
					mu.Unlock()
				case "gosched":
					for int(turn.Load()) != id {
						runtime.Gosched()
					}
					shared = work(shared)
					turn.Store(int32((id + 1) % g))
				case "spinlock":
					for !lock.CompareAndSwap(0, 1) {
						runtime.Gosched()
					}
					shared = work(shared)
					lock.Store(0)
				default:
					panic("mode: mutex | gosched | spinlock")
				}
			}
		}(id)
	}
	wg.Wait()
	fmt.Println(shared != 42, runtime.GOMAXPROCS(0))
}
