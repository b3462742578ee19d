// A small net/http server for lab/attach: listens on 127.0.0.1 (port written to ARGV[1]),
// appends a line to the file ARGV[2] (opened before any request) per request. Go runs it on
// several OS threads and moves goroutines between them: a connection is accepted on one thread
// and read on another.

package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	f, _ := os.OpenFile(os.Args[2], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0644)
	os.WriteFile(os.Args[1], []byte(fmt.Sprintf("%d\n", l.Addr().(*net.TCPAddr).Port)), 0644)
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.Write([]byte("served\n"))
		w.Write([]byte("ok\n"))
	})
	// bounded: the lab stops it, and it stops itself after 60 s
	go func() { time.Sleep(60 * time.Second); os.Exit(0) }()
	http.Serve(l, nil)
}
