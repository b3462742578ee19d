// get.go: downloads http://127.0.0.1:PORT/body.bin once.
//   raw:  net.Dial, an HTTP/1.1 keep-alive request written by hand, io.ReadAll(conn): ReadAll
//         returns only when the server closes, i.e. after its keep-alive timeout
//   http: net/http's client (http.Get), the body read to EOF and closed: the client stops at
//         Content-Length
// usage: get MODE PORT
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	mode, port := os.Args[1], os.Args[2]
	switch mode {
	case "raw":
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(c, "GET /body.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
		b, err := io.ReadAll(c)
		fmt.Println(len(b), err)
		c.Close()
	case "http":
		resp, err := http.Get("http://127.0.0.1:" + port + "/body.bin")
		if err != nil {
			panic(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(n, err)
	default:
		panic("mode: raw | http")
	}
}
