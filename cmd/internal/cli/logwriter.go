package cli

import (
	"io"
	"sync"
	"time"
)

// logWriter gathers the log's lines and writes them at most every delay, or as soon as
// maxLogBuffer bytes are waiting: one write(2) for many request lines instead of one each.
// Flush writes what is waiting; serve flushes on every way out, so an orderly shutdown loses
// no line (a SIGKILL may lose the last delay's lines).
type logWriter struct {
	mu      sync.Mutex
	w       io.Writer
	delay   time.Duration
	buf     []byte
	timer   *time.Timer
	pending bool // a flush is scheduled
}

// maxLogBuffer is how much logWriter holds before it writes without waiting.
const maxLogBuffer = 64 << 10

func newLogWriter(w io.Writer, delay time.Duration) *logWriter {
	return &logWriter{w: w, delay: delay}
}

// Write keeps a copy of p (slog reuses its buffer) and schedules a flush.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if len(l.buf) >= maxLogBuffer {
		return len(p), l.flushLocked()
	}
	if !l.pending {
		l.pending = true
		if l.timer == nil {
			l.timer = time.AfterFunc(l.delay, func() { l.Flush() })
		} else {
			l.timer.Reset(l.delay)
		}
	}
	return len(p), nil
}

// Flush writes every line waiting.
func (l *logWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

func (l *logWriter) flushLocked() error {
	l.pending = false
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	if cap(l.buf) > 4*maxLogBuffer {
		l.buf = nil
	} else {
		l.buf = l.buf[:0]
	}
	return err
}
