// run_true.go: runs `true` N times with os/exec.
//   bad:  exec.Command("true") each time: exec.Command calls exec.LookPath, which stats the name
//         in every $PATH directory until it is found (no cache)
//   good: exec.LookPath("true") once, then exec.Command(path) with the absolute path
// usage: run_true MODE N
package main

import (
	"os"
	"os/exec"
	"strconv"
)

func main() {
	mode := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	name := "true"
	if mode == "good" {
		p, err := exec.LookPath("true")
		if err != nil {
			panic(err)
		}
		name = p
	} else if mode != "bad" {
		panic("mode: bad | good")
	}
	for i := 0; i < n && i < 500; i++ {
		if err := exec.Command(name).Run(); err != nil {
			panic(err)
		}
	}
}
