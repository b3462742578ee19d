// lines.go: writes N log lines to a file, unbuffered (one os.File.Write per line: one write(2)
// each, Go's os.File has no buffer) or through bufio.NewWriterSize(f, 64 KiB).
// usage: lines MODE N OUT   (MODE: unbuffered | bufio64k | bufio-default)
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

func main() {
	mode, out := os.Args[1], os.Args[3]
	n, _ := strconv.Atoi(os.Args[2])
	f, err := os.Create(out)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	switch mode {
	case "unbuffered":
		for i := 0; i < n; i++ {
			fmt.Fprintf(f, "2026-11-27T17:00:00Z INFO request %d served in 3 ms status=200\n", i)
		}
	case "bufio64k", "bufio-default":
		var w *bufio.Writer
		if mode == "bufio64k" {
			w = bufio.NewWriterSize(f, 64<<10)
		} else {
			w = bufio.NewWriter(f) // 4 KiB
		}
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "2026-11-27T17:00:00Z INFO request %d served in 3 ms status=200\n", i)
		}
		if err := w.Flush(); err != nil {
			panic(err)
		}
	default:
		panic("mode: unbuffered | bufio64k | bufio-default")
	}
}
