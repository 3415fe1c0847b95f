// Package txtar reads and writes the golang.org/x/tools/txtar format of waybill's golden files:
// a comment, then "-- name --" sections.
package txtar

import (
	"bytes"
	"fmt"
	"strings"
)

// Archive is a parsed file.
type Archive struct {
	Comment []byte
	Files   []File
}

// File is one section.
type File struct {
	Name string
	Data []byte
}

// Parse parses data.
func Parse(data []byte) Archive {
	var ar Archive
	cur := &ar.Comment
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if s := string(line); strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") && len(s) > 6 {
			ar.Files = append(ar.Files, File{Name: strings.TrimSpace(s[3 : len(s)-3])})
			cur = &ar.Files[len(ar.Files)-1].Data
			continue
		}
		*cur = append(append(*cur, line...), '\n')
	}
	return ar
}

// Format writes the archive back.
func (ar Archive) Format() []byte {
	var b bytes.Buffer
	b.Write(ar.Comment)
	for _, f := range ar.Files {
		fmt.Fprintf(&b, "-- %s --\n", f.Name)
		b.Write(f.Data)
	}
	return b.Bytes()
}
