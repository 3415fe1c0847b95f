// Package clitest holds what the command line's tests share across cmd/internal/cli,
// cmd/waybill and cmd/waybill-pg.
package clitest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer safe for a server's goroutines and the test reading it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
