package observe

import (
	"io"
	"sync"
	"time"
)

// LogWriter buffers the lines of the process's logger for w (stderr), so
// that a busy server writes its log in a few large writes instead of one
// system call a line. A line waits at most the flush interval; Flush
// writes at once (the logger flushes after every line at warn level or
// above), and after Close every line goes straight to w. What a crash
// loses is what waited: at most one interval of lines at info level.
type LogWriter struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	timer  *time.Timer
	every  time.Duration
	closed bool
}

// logBufferSize is what a LogWriter holds before it writes without waiting.
const logBufferSize = 64 << 10

// NewLogWriter buffers lines for w, each written within every.
func NewLogWriter(w io.Writer, every time.Duration) *LogWriter {
	l := &LogWriter{w: w, every: every, buf: make([]byte, 0, logBufferSize)}
	l.timer = time.AfterFunc(every, func() { _ = l.Flush() })
	l.timer.Stop()
	return l
}

// Write queues p (one log line), writing the buffer first when p does not
// fit in it.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.w.Write(p)
	}
	if len(l.buf)+len(p) > cap(l.buf) {
		if err := l.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > cap(l.buf) {
			return l.w.Write(p)
		}
	}
	if len(l.buf) == 0 {
		l.timer.Reset(l.every)
	}
	l.buf = append(l.buf, p...)
	return len(p), nil
}

// Flush writes what is buffered.
func (l *LogWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

func (l *LogWriter) flushLocked() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// Close writes what is buffered; later lines are written unbuffered.
func (l *LogWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer.Stop()
	l.closed = true
	return l.flushLocked()
}
