package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/waybill/waybill/cmd/internal/cli"
	"github.com/waybill/waybill/store"
)

// TestManualStandsAlone: README.md and docs/ are the whole manual. They point to no document
// outside the repository, and README names every flag `waybill help` lists and every
// environment variable the commands read.
func TestManualStandsAlone(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	outside := regexp.MustCompile(`DESIGN(\.md| §)|spec/interface\.md|\.\./shared|shared design folder`)
	for _, f := range append(docs, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range outside.FindAllString(string(b), -1) {
			t.Errorf("%s points outside the repository: %q", filepath.Base(f), m)
		}
	}

	var help bytes.Buffer
	sqlite := cli.Database{Default: "waybill.db", Help: "SQLite database path", Open: store.OpenSQLite}
	if err := cli.Run(context.Background(), sqlite, []string{"help"}, func(string) string { return "" },
		strings.NewReader(""), &help, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z-]+)`).FindAllStringSubmatch(help.String(), -1) {
		if !bytes.Contains(readme, []byte("-"+m[1])) {
			t.Errorf("README does not name the flag -%s", m[1])
		}
	}
	src, _ := filepath.Glob("../internal/cli/*.go")
	for _, f := range src {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range regexp.MustCompile(`WAYBILL_[A-Z_]+`).FindAll(b, -1) {
			if !bytes.Contains(readme, v) {
				t.Errorf("README does not name the environment variable %s (%s)", v, filepath.Base(f))
			}
		}
	}

	// A passage written twice (a merge gone wrong) repeats a run of words: no twelve words in a
	// row may appear twice in one section's prose.
	prose := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(readme), "")
	for _, section := range strings.Split(prose, "\n## ") {
		words, seen := strings.Fields(section), map[string]bool{}
		for i := 0; i+12 <= len(words); i++ {
			run := strings.Join(words[i:i+12], " ")
			if seen[run] {
				t.Errorf("README repeats %q", run)
			}
			seen[run] = true
		}
	}
}
