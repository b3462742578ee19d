// idle.go: a Go program whose goroutines are idle most of the time: 8 workers wait on a
// channel for 50 jobs sent every 20 ms (1 s), so the runtime's threads park and unpark in futex
// waits; nobody contends.
package main

import (
	"fmt"
	"sync"
	"time"
)

func main() {
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	sum := 0
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				x := j
				for k := 0; k < 1000; k++ {
					x = x*31 + k
				}
				mu.Lock()
				sum += x
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 50; i++ {
		time.Sleep(20 * time.Millisecond)
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	fmt.Println("sum", sum)
}
