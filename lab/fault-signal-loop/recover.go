// recover.go: a nil pointer dereference used as control flow (lab/fault-signal-loop, variant
// go-recover): N loads through a nil pointer, each turned by the Go runtime's SIGSEGV handler
// into a panic and caught with recover. `recover N`.
package main

import (
	"fmt"
	"os"
	"strconv"
)

type node struct {
	pad  [7]int64
	next *node
}

//go:noinline
func field(n *node) (v *node, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return n.next, true
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: recover N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 || n > 100000000 {
		fmt.Fprintln(os.Stderr, "recover: N out of range")
		os.Exit(2)
	}
	var missing *node
	failed := 0
	for i := 0; i < n; i++ {
		if _, ok := field(missing); !ok {
			failed++
		}
	}
	fmt.Printf("%d nil dereferences recovered\n", failed)
}
