//go:build unix

package main

import "syscall"

// privateFiles makes every file and directory this process creates from
// now on private to its user (at most 0600 and 0700), whatever umask it
// was started with: the gateway's data dir holds the master key, token
// files, the control plane, tenants' mini-app tables, their backups and
// exports, and SQLite creates its files (and their -wal and -shm) with
// 0644 less the umask. The gateway commands call it first; the drop-in
// mode keeps the user's umask, as mini-app-mcp does.
func privateFiles() { syscall.Umask(0o077) }
