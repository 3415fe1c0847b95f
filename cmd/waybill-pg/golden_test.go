package main

import (
	"testing"

	"github.com/waybill/waybill/httpapi/apitest"
)

// TestGolden replays every golden file of the root module on PostgreSQL, each case in a fresh
// schema; the answers must be byte for byte those recorded on SQLite.
func TestGolden(t *testing.T) {
	apitest.RunGolden(t, "../../testdata", openFresh, false)
}
