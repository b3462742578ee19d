// spawn.go: starts /bin/true 3 times with os/exec (the child is set up by Go's
// forkAndExecInChild: only the fds in cmd.ExtraFiles are passed, all others are O_CLOEXEC).
// usage: spawn
package main

import "os/exec"

func main() {
	for i := 0; i < 3; i++ {
		if err := exec.Command("/bin/true").Run(); err != nil {
			panic(err)
		}
	}
}
