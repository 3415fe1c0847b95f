// Package tooltest finds the outside programs tests check documents with (pdftoppm, pdftotext,
// qpdf, zbarimg, …): a missing one skips the test, except under CI=true, where it fails it.
package tooltest

import (
	"os"
	"os/exec"
	"testing"
)

// Require returns the path of the program name, or ends the test: a skip where it is not
// installed, a failure under CI=true, where CI must have installed it.
func Require(tb testing.TB, name string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is required in CI: %v", name, err)
		}
		tb.Skipf("%s not installed", name)
	}
	return path
}
