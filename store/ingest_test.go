package store

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClaimFindsRowsByID: each import claim reads the backlog's index for its batch and then
// updates the batch's rows by id; it never walks every queued import (a claim cost 17 ms at
// 10,700 queued when the outer statement matched rows by status).
func TestClaimFindsRowsByID(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for where, args := range map[string][]any{claimExpired: {"PROCESSING", 1, 32, "PROCESSING", 2}, claimQueued: {"QUEUED", 32, "PROCESSING", 2}} {
		joined := queryPlan(t, db, db.claimSQL(where, len(args)-3), args...)
		// The CTE reads the index; then each picked row is found by id.
		if !strings.Contains(joined, "SCAN picked\nSEARCH order_imports USING INDEX sqlite_autoindex_order_imports_1 (id=?)") {
			t.Errorf("claim %q: the outer statement does not find its rows by id:\n%s", where, joined)
		}
	}
}

func TestStatementSizes(t *testing.T) {
	for n, want := range map[int][]int{0: nil, 1: {1}, 5: {4, 1}, 63: {16, 16, 16, 4, 4, 4, 1, 1, 1},
		64: {64}, 100: {64, 16, 16, 4}, 256: {64, 64, 64, 64}} {
		if got := statementSizes(n); !slices.Equal(got, want) {
			t.Errorf("statementSizes(%d) = %v; want %v", n, got, want)
		}
	}
}
