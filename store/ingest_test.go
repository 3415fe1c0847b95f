package store

import (
	"slices"
	"testing"
)

func TestStatementSizes(t *testing.T) {
	for n, want := range map[int][]int{0: nil, 1: {1}, 5: {4, 1}, 63: {16, 16, 16, 4, 4, 4, 1, 1, 1},
		64: {64}, 100: {64, 16, 16, 4}, 256: {64, 64, 64, 64}} {
		if got := statementSizes(n); !slices.Equal(got, want) {
			t.Errorf("statementSizes(%d) = %v; want %v", n, got, want)
		}
	}
}
