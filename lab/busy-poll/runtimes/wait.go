// wait.go: waits for a line on a FIFO (whose writer, run.sh, writes after 0.3 s).
//   spin: opens it O_NONBLOCK with syscall.Open and retries syscall.Read on EAGAIN (what code
//         that drives raw fds through syscall/x/sys/unix does when it forgets to wait)
//   wait: os.OpenFile + f.Read: Go's runtime poller parks the goroutine in epoll_wait until the
//         FIFO is readable
// usage: wait MODE FIFO      (bounded: at most 10,000,000 tries)
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	mode, path := os.Args[1], os.Args[2]
	buf := make([]byte, 512)
	switch mode {
	case "spin":
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			panic(err)
		}
		for i := 0; i < 10_000_000; i++ {
			n, err := syscall.Read(fd, buf)
			if err == syscall.EAGAIN {
				continue
			}
			fmt.Printf("%d bytes after %d tries\n", n, i)
			return
		}
	case "wait":
		f, err := os.OpenFile(path, os.O_RDONLY, 0)
		if err != nil {
			panic(err)
		}
		n, err := f.Read(buf)
		fmt.Println(n, err)
	default:
		panic("mode: spin | wait")
	}
}
