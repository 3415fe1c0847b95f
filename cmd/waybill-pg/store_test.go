package main

import (
	"testing"

	"github.com/waybill/waybill/store/storetest"
)

// TestStore runs the whole store suite on PostgreSQL, each test in a fresh schema.
func TestStore(t *testing.T) {
	storetest.Run(t, openFresh)
}
