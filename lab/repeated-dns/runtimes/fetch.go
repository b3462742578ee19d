// fetch.go: N GET requests to http://NAME:PORT/feed/i.
//   each:   a new http.Client with its own http.Transport per request (a common mistake): every
//           request dials a new connection, and Go's resolver (pure Go or cgo alike) has no
//           cache, so every dial looks NAME up again
//   shared: one http.Client for all requests (http.DefaultTransport's pool keeps the
//           connection alive): one dial, one lookup
// usage: fetch MODE N NAME PORT
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
)

func get(c *http.Client, url string) {
	resp, err := c.Get(url)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func main() {
	mode, name, port := os.Args[1], os.Args[3], os.Args[4]
	n, _ := strconv.Atoi(os.Args[2])
	if n > 200 {
		n = 200
	}
	shared := &http.Client{}
	for i := 0; i < n; i++ {
		url := fmt.Sprintf("http://%s:%s/feed/%d", name, port, i)
		switch mode {
		case "each":
			t := &http.Transport{}
			get(&http.Client{Transport: t}, url)
			t.CloseIdleConnections()
		case "shared":
			get(shared, url)
		default:
			panic("mode: each | shared")
		}
	}
}
