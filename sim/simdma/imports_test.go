package simdma

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestProductionDoesNotImport: the drivers and the packages under them
// (dma, pool, driver, enetc, fec, outside their tests and device models)
// reach the simulated IOMMU only as a dma.Mapper a caller hands them:
// none imports this package or the simulator, directly or through a
// package of its own tree.
func TestProductionDoesNotImport(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{"dma", "pool", "driver", "enetc", "fec"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "model" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				if p == "github.com/gopmd/gopmd/sim" || strings.HasPrefix(p, "github.com/gopmd/gopmd/sim/") {
					t.Errorf("%s imports %s: production code must not know the simulator", path, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files; the scan would prove nothing", checked)
	}
}
