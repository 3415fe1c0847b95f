package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// TestVanishedDatabase: once the SQLite file is deleted or replaced under the open database,
// every write and Ping is ErrUnavailable, instead of succeeding into a file no path names.
func TestVanishedDatabase(t *testing.T) {
	ctx := context.Background()
	write := func(db *DB) error {
		return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				9000+len(db.NewID()), "probe", 0)
			return err
		})
	}
	tests := []struct {
		name   string
		vanish func(t *testing.T, path string)
	}{
		{"deleted", func(t *testing.T, path string) {
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
			}
		}},
		{"replaced by a new database", func(t *testing.T, path string) {
			fresh := filepath.Join(filepath.Dir(path), "fresh.db")
			other, err := OpenSQLite(ctx, fresh)
			if err != nil {
				t.Fatal(err)
			}
			other.Close()
			if err := os.Rename(fresh, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"renamed away", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".bak"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "waybill.db")
			db, err := OpenSQLite(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Ping(ctx); err != nil {
				t.Fatalf("Ping before = %v", err)
			}
			if err := write(db); err != nil {
				t.Fatalf("write before = %v", err)
			}
			tt.vanish(t, path)
			if err := db.Ping(ctx); !errors.Is(err, ErrUnavailable) {
				t.Errorf("Ping after = %v; want ErrUnavailable", err)
			}
			if err := write(db); !errors.Is(err, ErrUnavailable) {
				t.Errorf("write after = %v; want ErrUnavailable", err)
			}
			acct, err := db.CreateAccount(ctx, "acme", "Acme")
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("CreateAccount after = %v, %v; want ErrUnavailable", acct, err)
			}
			if _, err := db.CreateWebhookSubscription(ctx, "a", "https://example.com/h", "LABEL_PURCHASED", true); !errors.Is(err, ErrUnavailable) {
				t.Errorf("CreateWebhookSubscription after = %v; want ErrUnavailable", err)
			}
		})
	}
}

// TestVanishedDatabaseRestored: the check follows the path, so moving the very file back
// makes the database available again.
func TestVanishedDatabaseRestored(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "waybill.db")
	db, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := os.Rename(path, path+".bak"); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Ping while moved away = %v; want ErrUnavailable", err)
	}
	if err := os.Rename(path+".bak", path); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping after the file came back = %v; want nil", err)
	}
}
