// Package tooltest finds the outside programs tests check documents with (pdftoppm, pdftotext,
// qpdf, zbarimg, …): a missing one skips the test, except under CI=true, where it fails it.
// It also reads PDFs with them.
package tooltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// PDFPages returns the text pdftotext reads off each page of doc (pdfinfo counts the pages),
// its whitespace runs made single spaces.
func PDFPages(tb testing.TB, doc []byte) []string {
	tb.Helper()
	pdfinfo, pdftotext := Require(tb, "pdfinfo"), Require(tb, "pdftotext")
	file := filepath.Join(tb.TempDir(), "doc.pdf")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(pdfinfo, file).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdfinfo: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)$`).FindSubmatch(out)
	if m == nil {
		tb.Fatalf("pdfinfo names no page count:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	pages := make([]string, n)
	for i := range pages {
		p := strconv.Itoa(i + 1)
		out, err := exec.Command(pdftotext, "-enc", "UTF-8", "-f", p, "-l", p, file, "-").CombinedOutput()
		if err != nil {
			tb.Fatalf("pdftotext page %s: %v\n%s", p, err, out)
		}
		pages[i] = strings.Join(strings.Fields(string(out)), " ")
	}
	return pages
}
