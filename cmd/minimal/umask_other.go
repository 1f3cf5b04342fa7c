//go:build !unix

package main

// privateFiles does nothing where there is no umask: files take the data
// dir's access control list.
func privateFiles() {}
