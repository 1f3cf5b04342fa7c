//go:build !linux

package main

import "syscall"

// childProcAttr: outside Linux the children keep the default attributes
// (the RSS measure needs /proc and reports it is unavailable).
func childProcAttr() *syscall.SysProcAttr { return nil }
