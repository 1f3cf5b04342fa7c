package main

import "syscall"

// childProcAttr puts a child in its own process group, so a Ctrl-C at the
// terminal reaches only the bench (which then stops its children in order),
// and has the kernel send it SIGTERM should the bench die without cleaning up.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
