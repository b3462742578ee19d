// records.go: appends N records of ~33 bytes to a log file and makes them durable.
//   each:  f.Sync() (fsync) after every record
//   batch: one f.Sync() after all records (group commit)
// usage: records MODE N FILE
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	mode, path := os.Args[1], os.Args[3]
	n, _ := strconv.Atoi(os.Args[2])
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	for i := 0; i < n && i < 5000; i++ {
		fmt.Fprintf(f, "record %d: account=%d amount=%d\n", i, i%97, i*3)
		if mode == "each" {
			if err := f.Sync(); err != nil {
				panic(err)
			}
		}
	}
	if mode != "each" && mode != "batch" {
		panic("mode: each | batch")
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
}
