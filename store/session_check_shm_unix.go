//go:build unix

package store

import (
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// mapWALIndex maps the first page of the wal-index (the -shm file) of the
// SQLite database at path, read-only; nil when it cannot.
func mapWALIndex(path string) []byte {
	f, err := os.Open(path + "-shm")
	if err != nil {
		return nil
	}
	defer f.Close()
	// Past the end of the file a mapping faults: the file must hold the
	// headers (SQLite sizes it in 32 KiB regions, and never shrinks it
	// while a connection, the checker's, has it open).
	if fi, err := f.Stat(); err != nil || fi.Size() < walIndexMapped {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, walIndexMapped, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return b
}

// unmapWALIndex releases a mapping of mapWALIndex.
func unmapWALIndex(b []byte) { _ = syscall.Munmap(b) }

// readWALHeader reads the wal-index header in b (mapWALIndex) as SQLite's
// readers do: the first copy, then the second, which a committer writes
// first; ok only when both agree (no commit was writing it meanwhile).
func readWALHeader(b []byte) (h walHeader, ok bool) {
	w := (*[2 * len(walHeader{})]uint32)(unsafe.Pointer(unsafe.SliceData(b)))
	for i := range h {
		h[i] = atomic.LoadUint32(&w[i])
	}
	for i := range h {
		if atomic.LoadUint32(&w[len(h)+i]) != h[i] {
			return walHeader{}, false
		}
	}
	return h, true
}
