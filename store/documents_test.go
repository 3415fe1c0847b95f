package store

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"
)

// failingReader fails every read: a key that exists must not draw randomness.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestServerKey: the key is made once and every process sharing the database reads the same.
func TestServerKey(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	one, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	two, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	k1, err := one.ServerKey(ctx, DocumentURLKey)
	if err != nil {
		t.Fatal(err)
	}
	two.Rand = failingReader{}
	k2, err := two.ServerKey(ctx, DocumentURLKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != 32 || !bytes.Equal(k1, k2) {
		t.Errorf("keys = %x, %x; want the same 32 bytes", k1, k2)
	}
	if other, err := one.ServerKey(ctx, "another"); err != nil || bytes.Equal(other, k1) {
		t.Errorf("another key = %x, %v; want a different key", other, err)
	}
	if _, err := two.ServerKey(ctx, "not yet made"); err == nil {
		t.Error("making a key with failing randomness succeeded")
	}
}
