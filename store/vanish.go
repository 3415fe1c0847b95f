package store

import (
	"errors"
	"fmt"
	"os"
)

// ErrUnavailable reports that the database cannot be trusted with writes: its SQLite file was
// deleted or replaced under the running process. Writes would still succeed, into a file no
// path names any more, and be lost at the next start; refusing them is the only honest answer.
var ErrUnavailable = errors.New("database unavailable")

// fileWatch remembers which file a SQLite database opened, so that the store notices when its
// path stops naming it.
type fileWatch struct {
	path   string
	opened os.FileInfo
}

// watchFile starts watching the database file at path; the file must exist (the migrations
// created it). A path that names no file (":memory:") is not watched.
func watchFile(path string) *fileWatch {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return &fileWatch{path: path, opened: fi}
}

// checkFile reports ErrUnavailable when the database's path no longer names the file opened
// at start. It costs one stat(2), next to the fsync of every commit, so every write
// transaction and every Ping checks afresh: there is no window in which a lost write is
// acknowledged.
func (db *DB) checkFile() error {
	f := db.file
	if f == nil {
		return nil
	}
	fi, err := os.Stat(f.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: the file %s was deleted", ErrUnavailable, f.path)
	case err != nil:
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	case !os.SameFile(fi, f.opened):
		return fmt.Errorf("%w: %s is no longer the file opened at start (replaced)", ErrUnavailable, f.path)
	}
	return nil
}
